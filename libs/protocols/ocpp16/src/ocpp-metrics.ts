import { Injectable } from '@nestjs/common';
import { GatewayMetrics } from '#broker/gateway';
import { Counter, Gauge } from 'prom-client';
import { ChargePointSessions } from './charge-point-sessions.js';
import { type BadMessageReason } from './errors.js';

/** The module's counters, on the gateway's registry so that /metrics shows them. */
@Injectable()
export class OcppMetrics {
  readonly badMessages: Counter<'reason'>;
  readonly calls: Counter<'direction' | 'action' | 'outcome'>;
  readonly chargePoints: Gauge;
  /**
   * CALLs from charge points answered with a CALLRESULT, by action, as plain numbers read at scrape:
   * prom-client hashes the labels on every inc(), a measurable share of a Heartbeat's cost. Actions
   * are the schema's, so the map stays small.
   */
  private readonly handled = new Map<string, { now: number; reported: number }>();

  constructor(gateway: GatewayMetrics, sessions: ChargePointSessions) {
    gateway.modules.report('ocpp1.6', {
      title: 'OCPP 1.6',
      labels: { chargePoints: 'Charge points connected' },
      read: () => ({ chargePoints: sessions.size }),
    });
    const registers = [gateway.registry];
    this.badMessages = new Counter({
      name: 'broker_ocpp_bad_messages_total',
      help: 'OCPP messages refused or ignored, by reason (docs/ocpp.md)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.calls = new Counter({
      name: 'broker_ocpp_calls_total',
      help: 'OCPP CALLs handled (in: from charge points) or made (out: admin API), by outcome',
      labelNames: ['direction', 'action', 'outcome'] as const,
      registers,
      collect: () => {
        for (const [action, count] of this.handled) {
          if (count.now === count.reported) continue;
          this.calls.inc({ direction: 'in', action, outcome: 'result' }, count.now - count.reported);
          count.reported = count.now;
        }
      },
    });
    this.chargePoints = new Gauge({
      name: 'broker_ocpp_charge_points',
      help: 'Charge points connected to this node',
      registers,
    });
  }

  callHandled(action: string): void {
    const count = this.handled.get(action);
    if (count === undefined) this.handled.set(action, { now: 1, reported: 0 });
    else count.now++;
  }

  badMessage(reason: BadMessageReason): void {
    this.badMessages.inc({ reason });
  }
}
