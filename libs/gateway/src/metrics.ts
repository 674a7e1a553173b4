import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

export interface ConnectionMetrics {
  readonly open: Gauge.Internal<'endpoint' | 'subprotocol'>;
  readonly messagesIn: Counter.Internal;
  readonly bytesIn: Counter.Internal;
  readonly messagesOut: Counter.Internal;
  readonly bytesOut: Counter.Internal;
}

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

  private readonly perConnection = new Map<string, ConnectionMetrics>();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The label children a connection updates, resolved once per endpoint and subprotocol, not per connection. */
  forConnection(endpoint: string, subprotocol: string): ConnectionMetrics {
    const key = `${endpoint}\n${subprotocol}`;
    let entry = this.perConnection.get(key);
    if (entry === undefined) {
      const labels = { endpoint, subprotocol };
      entry = {
        open: this.connections.labels(labels),
        messagesIn: this.messages.labels({ direction: 'in', ...labels }),
        bytesIn: this.bytes.labels({ direction: 'in', ...labels }),
        messagesOut: this.messages.labels({ direction: 'out', ...labels }),
        bytesOut: this.bytes.labels({ direction: 'out', ...labels }),
      };
      this.perConnection.set(key, entry);
    }
    return entry;
  }
}
