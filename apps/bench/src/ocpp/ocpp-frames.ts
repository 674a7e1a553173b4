/** The two calls each charge point alternates, and the checks on their answers. */
export type BenchAction = 'BootNotification' | 'Heartbeat' | 'MeterValues';

/**
 * One CALL frame. MeterValues carries one energy reading, the commonest sample a charge point sends;
 * its timestamp is built once per run by the caller, so the frame costs the load generator a few
 * string concatenations.
 */
export function callFrame(id: string, action: BenchAction, timestamp: string, reading: number): string {
  if (action === 'Heartbeat') return `[2,"${id}","Heartbeat",{}]`;
  if (action === 'BootNotification') {
    return `[2,"${id}","BootNotification",{"chargePointVendor":"Bench","chargePointModel":"Load 1"}]`;
  }
  return (
    `[2,"${id}","MeterValues",{"connectorId":1,"meterValue":[{"timestamp":"${timestamp}",` +
    `"sampledValue":[{"value":"${reading}","measurand":"Energy.Active.Import.Register","unit":"Wh"}]}]}]`
  );
}

/** Null when `text` is the right CALLRESULT for the call `id`, else a short label to count. */
export function checkCallResult(text: string, id: string, action: BenchAction): string | null {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return 'invalid JSON';
  }
  if (!Array.isArray(frame)) return 'not an OCPP-J frame';
  if (frame[0] === 4) return `CALLERROR ${String(frame[2])} for ${action}`;
  if (frame[0] !== 3 || frame.length !== 3) return `unexpected frame type ${String(frame[0])}`;
  if (frame[1] !== id) return 'CALLRESULT for another message id';
  const payload = frame[2] as Record<string, unknown> | null;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return 'payload not an object';
  if (action === 'MeterValues') return Object.keys(payload).length === 0 ? null : 'MeterValues answer not {}';
  if (typeof payload['currentTime'] !== 'string' || Number.isNaN(Date.parse(payload['currentTime']))) {
    return `${action} answer without a valid currentTime`;
  }
  if (action === 'BootNotification' && payload['status'] !== 'Accepted') {
    return `BootNotification ${String(payload['status'])}`;
  }
  return null;
}
