import { Injectable } from '@nestjs/common';
import { GatewayMetrics } from '#broker/gateway';
import { Counter, Gauge } from 'prom-client';
import { type BadMessageReason } from './session.js';

/** The module's counters, on the gateway's registry so that /metrics shows them. */
@Injectable()
export class OcppMetrics {
  readonly badMessages: Counter<'reason'>;
  readonly calls: Counter<'direction' | 'action' | 'outcome'>;
  readonly chargePoints: Gauge;

  constructor(gateway: GatewayMetrics) {
    const registers = [gateway.registry];
    this.badMessages = new Counter({
      name: 'broker_ocpp_bad_messages_total',
      help: 'OCPP messages refused or ignored, by reason (README, OCPP 1.6)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.calls = new Counter({
      name: 'broker_ocpp_calls_total',
      help: 'OCPP CALLs handled (in: from charge points) or made (out: admin API), by outcome',
      labelNames: ['direction', 'action', 'outcome'] as const,
      registers,
    });
    this.chargePoints = new Gauge({
      name: 'broker_ocpp_charge_points',
      help: 'Charge points connected to this node',
      registers,
    });
  }

  badMessage(reason: BadMessageReason): void {
    this.badMessages.inc({ reason });
  }
}
