import { Inject, Injectable } from '@nestjs/common';
import { NoHolderError } from '#broker/cluster';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG } from '#broker/gateway';
import { CallQueueFullError, CallTimeoutError, ConnectionClosedError } from './call-tracker.js';
import { ChargePointDirectory } from './charge-point-directory.js';
import { CENTRAL_SYSTEM_ACTIONS } from './central-system-actions.js';
import { ocppConfig } from './ocpp-config.js';
import { ChargePointSessions } from './charge-point-sessions.js';
import { OcppMetrics } from './ocpp-metrics.js';
import { CallErrorResponse, InvalidResponseError } from './errors.js';

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

/**
 * Central-system-initiated calls to a charge point (the admin API's backend): on this node's socket, or
 * in cluster mode through the node holding it.
 */
@Injectable()
export class OcppCallService {
  constructor(
    private readonly sessions: ChargePointSessions,
    private readonly directory: ChargePointDirectory,
    private readonly metrics: OcppMetrics,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
  ) {}

  /** Resolves with the charge point's CALLRESULT payload; see OcppSession.call for the rejections. */
  async call(identity: string, action: string, payload: unknown): Promise<unknown> {
    if (!CENTRAL_SYSTEM_ACTIONS.has(action)) {
      throw new UnknownActionError(`${action} is not an action a central system sends in OCPP 1.6.`);
    }
    try {
      const result = await this.send(identity, action, payload);
      this.metrics.calls.inc({ direction: 'out', action, outcome: 'result' });
      return result;
    } catch (err) {
      if (err instanceof ChargePointNotConnectedError) throw err;
      this.metrics.calls.inc({ direction: 'out', action, outcome: outcomeOf(err) });
      throw err;
    }
  }

  private async send(identity: string, action: string, payload: unknown): Promise<unknown> {
    const connected = this.sessions.get(identity);
    if (connected !== undefined) return connected.session.call(action, payload);
    try {
      return await this.directory.callRemote(
        identity,
        action,
        payload,
        ocppConfig.of(this.config).callTimeoutMs,
      );
    } catch (err) {
      if (err instanceof NoHolderError) {
        throw new ChargePointNotConnectedError(`Charge point ${identity} is not connected.`);
      }
      throw err;
    }
  }
}
