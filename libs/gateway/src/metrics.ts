import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The gateway's Prometheus metrics, on a registry of their own so several brokers can share a process. */
@Injectable()
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly handshakes = new Counter({
    name: 'broker_handshakes_total',
    help: 'Upgrade handshakes by outcome and HTTP status',
    labelNames: ['outcome', 'status', 'endpoint'] as const,
    registers: [this.registry],
  });

  readonly plainRequests = new Counter({
    name: 'broker_upgrade_headers_missing_total',
    help: 'Plain GETs on a WebSocket endpoint (upgrade headers missing, often stripped by a proxy)',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly connections = new Gauge({
    name: 'broker_connections',
    help: 'Open WebSocket connections',
    labelNames: ['endpoint', 'subprotocol'] as const,
    registers: [this.registry],
  });

  readonly messages = new Counter({
    name: 'broker_messages_total',
    help: 'WebSocket messages',
    labelNames: ['direction', 'endpoint', 'subprotocol'] as const,
    registers: [this.registry],
  });

  readonly bytes = new Counter({
    name: 'broker_message_bytes_total',
    help: 'WebSocket message payload bytes',
    labelNames: ['direction', 'endpoint', 'subprotocol'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }
}
