import { integer, seconds, UsageError } from '../cli-options.js';
import { parseFlags } from '../protocol-bench/cli.js';

export interface MqttBenchOptions {
  readonly rounds: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly publishers: number;
  readonly fanout: number;
  /** Messages each fan-in publisher keeps under way. */
  readonly window: number;
  /** Messages the fan-out publisher keeps under way (each one is `fanout` deliveries). */
  readonly fanoutWindow: number;
  readonly idleConnections: number;
  readonly settleMs: number;
  /** How the load clients write: what one tick produces in one write, or a write per message. */
  readonly clientWrites: ClientWrites;
}

export type ClientWrites = 'tick' | 'message';

export const MQTT_USAGE = `Usage: node dist/apps/bench/src/mqtt/main.js [options]

MQTT over WebSocket: this broker, Mosquitto 2.0.11 (/usr/sbin/mosquitto) and Aedes, alternating rounds.

  --rounds <n>         rounds per server (default 3)
  --warmup <s>         unmeasured seconds before each measurement (default 1)
  --duration <s>       measured seconds per measurement (default 4)
  --publishers <n>     fan-in publishers (default 10)
  --fanout <n>         fan-out subscribers (default 1000)
  --window <n>         messages under way per fan-in publisher (default 50)
  --fanout-window <n>  messages under way for the fan-out publisher (default 5)
  --idle <n>           idle connections for the memory measurement (default 10000)
  --settle <s>         wait before each RSS reading (default 3)
  --client-writes <w>  tick: a load client's sends of one tick leave in one write (default);
                       message: a write per message, as MQTT.js over WebSocket does
  --help               this text`;

/** Returns null when --help was asked for. */
export function parseMqttOptions(argv: readonly string[]): MqttBenchOptions | null {
  const values = parseFlags(argv, {
    rounds: '3',
    warmup: '1',
    duration: '4',
    publishers: '10',
    fanout: '1000',
    window: '50',
    'fanout-window': '5',
    // Enough sessions that a Node server's one-time growth of its young generation (about 11 MB)
    // is not what the per-connection figure measures (BENCHMARKS.md's git history, MQTT, heap per idle connection).
    idle: '10000',
    settle: '3',
    'client-writes': 'tick',
  });
  if (values === null) return null;
  return {
    rounds: integer('--rounds', values.rounds, 1, 50),
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    publishers: integer('--publishers', values.publishers, 1, 1000),
    fanout: integer('--fanout', values.fanout, 1, 10_000),
    // Below every server's default queue (Mosquitto and the broker queue 1000 per session).
    window: integer('--window', values.window, 1, 1000),
    fanoutWindow: integer('--fanout-window', values['fanout-window'], 1, 1000),
    idleConnections: integer('--idle', values.idle, 1, 15_000),
    settleMs: seconds('--settle', values.settle, 0) * 1000,
    clientWrites: clientWrites(values['client-writes']),
  };
}

function clientWrites(text: string): ClientWrites {
  if (text === 'tick' || text === 'message') return text;
  throw new UsageError(`--client-writes: expected tick or message, got "${text}"`);
}
