import { MqttProtocolError, RC } from '../reason-codes.js';

/** Packet id 0 is not a packet id (2.2.1). */
export function requirePacketId(id: number | undefined, cmd: string): number {
  if (id === undefined || id === 0)
    throw new MqttProtocolError(RC.protocolError, `${cmd} without a packet id`);
  return id;
}
