import { type ErrorCounts } from '../load/error-counts.js';
import { fixed, markdownTable, times } from '../protocol-bench/markdown.js';
import { type LatencySummary } from '../stats.js';
import { type Latencies } from './latency-probes.js';
import { type Mix, type ScaleOptions, type ScaleServer } from './scale-options.js';

/** The targets: memory per connection within this multiple of Mosquitto's, p99 within this of idle. */
export const MEMORY_RATIO_TARGET = 1.2;
export const LATENCY_RATIO_TARGET = 2;

export interface ServerResult {
  readonly kind: ScaleServer;
  readonly mix: Mix;
  readonly openMs: number;
  /** Connections open after the settle, before the loaded probes. */
  readonly openAfterSettle: number;
  /** KiB: after the preflight, just before opening the population, and with it open. */
  readonly rssStartKiB: number;
  readonly rssBeforeKiB: number;
  readonly rssAfterKiB: number;
  readonly idle: Latencies;
  readonly loaded: Latencies;
  readonly errors: ErrorCounts;
}

export function bytesPerConnection(r: ServerResult, connections: number): number {
  return ((r.rssAfterKiB - r.rssBeforeKiB) * 1024) / connections;
}

const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`;
const ms = (value: number): string => `${fixed(value, 2)} ms`;

function population(r: ServerResult, connections: number): string {
  if (r.kind === 'mosquitto' || r.mix === 'mqtt') return `${connections} MQTT`;
  return `${Math.ceil(connections / 2)} MQTT + ${Math.floor(connections / 2)} chat.v1`;
}

function latencyRow(name: string, idle: LatencySummary, loaded: LatencySummary, clean: boolean): string[] {
  const ratio = loaded.p99 / idle.p99;
  const verdict = !clean ? 'errors' : ratio <= LATENCY_RATIO_TARGET ? 'met' : 'not met';
  return [
    name,
    ms(idle.p50),
    ms(idle.p99),
    ms(loaded.p50),
    ms(loaded.p99),
    times(loaded.p99, idle.p99),
    verdict,
  ];
}

function serverSection(r: ServerResult, options: ScaleOptions): string {
  const clean = r.errors.total === 0;
  const lines = [
    `### ${r.kind}: ${population(r, options.connections)} idle connections`,
    '',
    markdownTable(
      [
        'connections',
        'opened in',
        'open after settle',
        'RSS at start',
        'RSS before',
        'RSS after',
        'bytes per connection',
        'errors',
      ],
      'rrrrrrrr',
      [
        [
          String(options.connections),
          `${(r.openMs / 1000).toFixed(1)} s`,
          String(r.openAfterSettle),
          mib(r.rssStartKiB),
          mib(r.rssBeforeKiB),
          mib(r.rssAfterKiB),
          bytesPerConnection(r, options.connections).toFixed(0),
          String(r.errors.total),
        ],
      ],
    ),
    '',
  ];
  const rows = [
    latencyRow('handshake (new MQTT client to CONNACK)', r.idle.handshake, r.loaded.handshake, clean),
    latencyRow('MQTT publish to subscriber (QoS 0)', r.idle.message, r.loaded.message, clean),
  ];
  if (r.idle.chat !== null && r.loaded.chat !== null)
    rows.push(latencyRow('chat round trip', r.idle.chat, r.loaded.chat, clean));
  lines.push(
    markdownTable(
      ['latency', 'idle p50', 'idle p99', 'loaded p50', 'loaded p99', 'p99 loaded / idle', 'verdict'],
      'lrrrrrl',
      rows,
    ),
  );
  for (const [label, count] of r.errors.byLabel) lines.push('', `- error: ${label} (${count})`);
  return lines.join('\n');
}

export function scaleReport(results: readonly ServerResult[], options: ScaleOptions): string {
  const lines = [
    `## Idle connections: ${options.connections} on one node, from ${options.addresses} source addresses`,
    '',
    `Per server: ${options.samples} sequential samples per latency, first with the server idle, then with ` +
      `the population open; RSS read after a ${options.settleMs / 1000} s settle. The broker runs without ` +
      'WebSocket pings (pingIntervalMs 0), as Mosquitto sends none.',
  ];
  for (const r of results) lines.push('', serverSection(r, options));
  const broker = results.find((r) => r.kind === 'broker');
  const mosquitto = results.find((r) => r.kind === 'mosquitto');
  lines.push('', '### Targets', '');
  if (broker !== undefined && mosquitto !== undefined) {
    const ratio =
      bytesPerConnection(broker, options.connections) / bytesPerConnection(mosquitto, options.connections);
    const clean = broker.errors.total + mosquitto.errors.total === 0;
    const verdict = !clean ? 'errors' : ratio <= MEMORY_RATIO_TARGET ? 'met' : 'not met';
    const mixed =
      broker.mix === 'half'
        ? " (the broker's figure mixes MQTT and chat.v1 connections; --mix mqtt for MQTT only)"
        : '';
    lines.push(
      `- Memory per connection, broker / Mosquitto: ${ratio.toFixed(2)}x (target at most ${MEMORY_RATIO_TARGET}x): ${verdict}${mixed}.`,
    );
  } else {
    lines.push('- Memory per connection against Mosquitto: not measured (both servers are needed).');
  }
  for (const r of results) {
    const clean = r.errors.total === 0;
    const pairs: [string, LatencySummary, LatencySummary][] = [
      ['handshake', r.idle.handshake, r.loaded.handshake],
      ['MQTT message', r.idle.message, r.loaded.message],
    ];
    if (r.idle.chat !== null && r.loaded.chat !== null)
      pairs.push(['chat round trip', r.idle.chat, r.loaded.chat]);
    const parts = pairs.map(([name, idle, loaded]) => {
      const ratio = loaded.p99 / idle.p99;
      return `${name} ${ratio.toFixed(2)}x ${!clean ? '(errors)' : ratio <= LATENCY_RATIO_TARGET ? 'met' : 'not met'}`;
    });
    lines.push(
      `- ${r.kind}, p99 loaded / idle (target at most ${LATENCY_RATIO_TARGET}x): ${parts.join('; ')}.`,
    );
  }
  return lines.join('\n');
}
