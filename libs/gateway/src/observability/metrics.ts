import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { DashboardLookups } from './dashboard-lookups.js';
import { DashboardPanels } from './dashboard-panels.js';
import { DashboardTraces } from './dashboard-traces.js';
import { ModuleAlarms } from './module-alarms.js';
import { ModuleFigures } from './module-figures.js';
import { RecentRefusals } from './recent-refusals.js';

/** Message and byte counts of one endpoint x subprotocol, as plain numbers (see GatewayMetrics.flush). */
export interface Traffic {
  messagesIn: number;
  bytesIn: number;
  messagesOut: number;
  bytesOut: number;
  /** Events dropped for a client that was not reading (Connection.sendEvent). */
  messagesDropped: number;
  /** Times a connection's reads paused for spending more than its share of the loop (InputBudget). */
  inputPauses: number;
}

/**
 * What the connections of one endpoint x subprotocol update, as plain numbers: prom-client hashes
 * the labels on every inc(), which cost more than a fan-out message's own work and a measurable
 * share of each handshake. The metrics read these when Prometheus scrapes.
 */
export interface ConnectionMetrics {
  /** Connections open now. */
  open: number;
  /** Handshakes answered 101 since start. */
  accepted: number;
  readonly traffic: Traffic;
}

/** The counts of one endpoint x subprotocol (what the dashboard's feed reads each tick). */
export interface TrafficEntry {
  readonly labels: { endpoint: string; subprotocol: string };
  readonly connection: ConnectionMetrics;
  readonly reported: Traffic & { accepted: number };
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
    collect: () => this.flushAccepted(),
  });

  /** Counted as they are closed: a connection closed as it arrives gets no HTTP answer to count. */
  readonly refusedAtAccept = new Counter({
    name: 'broker_connections_refused_at_accept_total',
    help: 'Connections closed as they arrived: from an address far past its handshake rate, or at its share of silent sockets',
    registers: [this.registry],
  });

  readonly plainRequests = new Counter({
    name: 'broker_upgrade_headers_missing_total',
    help: 'Plain GETs on a WebSocket endpoint (upgrade headers missing, often stripped by a proxy)',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly http2WebSockets = new Counter({
    name: 'broker_http2_websockets_total',
    help: 'WebSockets opened over HTTP/2 (extended CONNECT, RFC 8441)',
    labelNames: ['endpoint'] as const,
    registers: [this.registry],
  });

  readonly connections = new Gauge({
    name: 'broker_connections',
    help: 'Open WebSocket connections',
    labelNames: ['endpoint', 'subprotocol'] as const,
    registers: [this.registry],
    collect: () => {
      for (const { labels, connection } of this.traffic) this.connections.set(labels, connection.open);
    },
  });

  /** Per endpoint x subprotocol; read by the two counters below when Prometheus scrapes. */
  private readonly traffic: TrafficEntry[] = [];

  readonly messages: Counter<'direction' | 'endpoint' | 'subprotocol'> = new Counter({
    name: 'broker_messages_total',
    help: 'WebSocket messages',
    labelNames: ['direction', 'endpoint', 'subprotocol'] as const,
    registers: [this.registry],
    collect: () => this.flush(this.messages, 'messagesIn', 'messagesOut'),
  });

  readonly bytes: Counter<'direction' | 'endpoint' | 'subprotocol'> = new Counter({
    name: 'broker_message_bytes_total',
    help: 'WebSocket message payload bytes',
    labelNames: ['direction', 'endpoint', 'subprotocol'] as const,
    registers: [this.registry],
    collect: () => this.flush(this.bytes, 'bytesIn', 'bytesOut'),
  });

  readonly dropped: Counter<'endpoint' | 'subprotocol'> = new Counter({
    name: 'broker_messages_dropped_total',
    help: 'Events dropped for a client with more than slowConsumerDropBytes unsent (it is not reading)',
    labelNames: ['endpoint', 'subprotocol'] as const,
    registers: [this.registry],
    collect: () => this.flushCount(this.dropped, 'messagesDropped'),
  });

  readonly inputPauses: Counter<'endpoint' | 'subprotocol'> = new Counter({
    name: 'broker_input_pauses_total',
    help: "Times a connection's reads paused: its messages took more than the endpoint's inputBudget share",
    labelNames: ['endpoint', 'subprotocol'] as const,
    registers: [this.registry],
    collect: () => this.flushCount(this.inputPauses, 'inputPauses'),
  });

  private readonly perConnection = new Map<string, ConnectionMetrics>();

  /** The latest refused handshakes with their reasons (the dashboard lists them). */
  readonly refusals = new RecentRefusals(20);

  /** The protocol modules' live counts (the dashboard shows them). */
  readonly modules = new ModuleFigures();

  /** The modules' own tables on the dashboard. */
  readonly panels = new DashboardPanels();
  /** The modules' ways to find one thing by its key (a session by client id) and act on it. */
  readonly lookups = new DashboardLookups();
  /** The kinds of trace the modules offer (a client's packets, a topic filter's messages). */
  readonly traces = new DashboardTraces();
  /** The modules' own alarms, judged with the dashboard's. */
  readonly alarms = new ModuleAlarms();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** What a connection updates, resolved once per endpoint and subprotocol. */
  forConnection(endpoint: string, subprotocol: string): ConnectionMetrics {
    const key = `${endpoint}\n${subprotocol}`;
    let entry = this.perConnection.get(key);
    if (entry === undefined) {
      entry = { open: 0, accepted: 0, traffic: zero() };
      this.traffic.push({
        labels: { endpoint, subprotocol },
        connection: entry,
        reported: { ...zero(), accepted: 0 },
      });
      this.perConnection.set(key, entry);
    }
    return entry;
  }

  /** Every endpoint x subprotocol seen since start, with its live counts (read, never reset). */
  entries(): readonly TrafficEntry[] {
    return this.traffic;
  }

  private flushAccepted(): void {
    for (const { labels, connection, reported } of this.traffic) {
      const delta = connection.accepted - reported.accepted;
      if (delta === 0) continue;
      this.handshakes.inc({ outcome: 'accepted', status: '101', endpoint: labels.endpoint }, delta);
      reported.accepted = connection.accepted;
    }
  }

  /** A counter labelled by endpoint and subprotocol, brought up to one field of the connections' traffic. */
  private flushCount(counter: Counter<'endpoint' | 'subprotocol'>, field: keyof Traffic): void {
    for (const { labels, connection, reported } of this.traffic) {
      const delta = connection.traffic[field] - reported[field];
      if (delta === 0) continue;
      counter.inc(labels, delta);
      reported[field] = connection.traffic[field];
    }
  }

  private flush(
    counter: Counter<'direction' | 'endpoint' | 'subprotocol'>,
    inbound: keyof Traffic,
    outbound: keyof Traffic,
  ): void {
    for (const { labels, connection, reported } of this.traffic) {
      for (const [field, direction] of [
        [inbound, 'in'],
        [outbound, 'out'],
      ] as const) {
        const delta = connection.traffic[field] - reported[field];
        if (delta === 0) continue;
        counter.inc({ direction, ...labels }, delta);
        reported[field] = connection.traffic[field];
      }
    }
  }
}

function zero(): Traffic {
  return { messagesIn: 0, bytesIn: 0, messagesOut: 0, bytesOut: 0, messagesDropped: 0, inputPauses: 0 };
}
