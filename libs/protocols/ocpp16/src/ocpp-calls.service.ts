import { Injectable } from '@nestjs/common';
import { CallQueueFullError, CallTimeoutError, ConnectionClosedError } from './call-tracker.js';
import { ChargePointSessions } from './charge-point-sessions.js';
import { OcppMetrics } from './ocpp-metrics.js';
import { CallErrorResponse, InvalidResponseError } from './session.js';

/** OCPP 1.6 actions a central system sends to charge points (Core and the other profiles, security extension included). */
export const CENTRAL_SYSTEM_ACTIONS: ReadonlySet<string> = new Set([
  'CancelReservation',
  'CertificateSigned',
  'ChangeAvailability',
  'ChangeConfiguration',
  'ClearCache',
  'ClearChargingProfile',
  'DataTransfer',
  'DeleteCertificate',
  'ExtendedTriggerMessage',
  'GetCompositeSchedule',
  'GetConfiguration',
  'GetDiagnostics',
  'GetInstalledCertificateIds',
  'GetLocalListVersion',
  'GetLog',
  'InstallCertificate',
  'RemoteStartTransaction',
  'RemoteStopTransaction',
  'ReserveNow',
  'Reset',
  'SendLocalList',
  'SetChargingProfile',
  'SignedUpdateFirmware',
  'TriggerMessage',
  'UnlockConnector',
  'UpdateFirmware',
]);

export class ChargePointNotConnectedError extends Error {
  override readonly name = 'ChargePointNotConnectedError';
}

export class UnknownActionError extends Error {
  override readonly name = 'UnknownActionError';
}

function outcomeOf(err: unknown): string {
  if (err instanceof CallErrorResponse) return 'callerror';
  if (err instanceof CallTimeoutError) return 'timeout';
  if (err instanceof ConnectionClosedError) return 'disconnected';
  if (err instanceof CallQueueFullError) return 'busy';
  if (err instanceof InvalidResponseError) return 'invalid-response';
  return 'invalid-request';
}

/** Central-system-initiated calls to a charge point connected to this node (the admin API's backend). */
@Injectable()
export class OcppCallService {
  constructor(
    private readonly sessions: ChargePointSessions,
    private readonly metrics: OcppMetrics,
  ) {}

  /** Resolves with the charge point's CALLRESULT payload; see OcppSession.call for the rejections. */
  async call(identity: string, action: string, payload: unknown): Promise<unknown> {
    if (!CENTRAL_SYSTEM_ACTIONS.has(action)) {
      throw new UnknownActionError(`${action} is not an action a central system sends in OCPP 1.6.`);
    }
    const connected = this.sessions.get(identity);
    if (connected === undefined) {
      throw new ChargePointNotConnectedError(`Charge point ${identity} is not connected to this node.`);
    }
    try {
      const result = await connected.session.call(action, payload);
      this.metrics.calls.inc({ direction: 'out', action, outcome: 'result' });
      return result;
    } catch (err) {
      this.metrics.calls.inc({ direction: 'out', action, outcome: outcomeOf(err) });
      throw err;
    }
  }
}
