import { integer, parseFlags, seconds, UsageError } from '../cli-options.js';

/** P publishers to S subscribers on one topic, each publisher keeping W messages under way. */
export interface Shape {
  readonly publishers: number;
  readonly subscribers: number;
  /** Messages each publisher keeps under way (each one is `subscribers` deliveries). */
  readonly window: number;
  /** Subscribers with persistent sessions (`PxS/Wp`): the cluster stores every message for them. */
  readonly persistent: boolean;
  /** "P → S", as the tables name it (", persistent" added). */
  readonly label: string;
}

export interface ClusterBenchOptions {
  readonly shapes: readonly Shape[];
  readonly rounds: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly natsUrls: readonly string[];
  /** The server's URL (its default database); the run creates and drops schemas of its own there. */
  readonly databaseUrl: string;
}

export const CLUSTER_USAGE = `Usage: node dist/apps/bench/src/main.js cluster [options]

MQTT QoS 0 fan-out over WebSocket in three set-ups, rounds alternating between them:
(a) one broker process, no NATS (SQLite store); (b) cluster mode, one node, every client on it;
(c) cluster mode, two nodes, the publishers on n1 and the subscribers on n2. Needs NATS with
JetStream and PostgreSQL; the run's schemas and KV buckets are removed at the end.

  --shapes <list>      comma-separated PxS/W: P publishers to S subscribers on one topic, W messages
                       under way per publisher (default 1x1000/5,10x10/20: the MQTT benchmark's
                       fan-out, and a small fan-out where the per-publish cost of cluster mode shows)
  --rounds <n>         rounds per set-up and shape (default 5)
  --warmup <s>         unmeasured seconds before each measurement (default 0.5)
  --duration <s>       measured seconds per measurement (default 2)
  --nats-url <urls>    comma-separated nats:// URLs (default $NATS_URL, else nats://127.0.0.1:4222)
  --database-url <u>   PostgreSQL server (default $DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test)
  --help               this text`;

/** Returns null when --help was asked for. */
export function parseClusterOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): ClusterBenchOptions | null {
  const values = parseFlags(argv, {
    shapes: '1x1000/5,10x10/20',
    rounds: '5',
    warmup: '0.5',
    duration: '2',
    'nats-url': env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
    'database-url': env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  });
  if (values === null) return null;
  const natsUrls = values['nats-url']
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
  if (natsUrls.length === 0 || natsUrls.some((url) => !/^(nats|tls):\/\/\S+$/.test(url))) {
    throw new UsageError(`--nats-url: expected nats:// URLs, got "${values['nats-url']}"`);
  }
  if (!/^postgres(ql)?:\/\//.test(values['database-url'])) {
    throw new UsageError(`--database-url: expected a postgres:// URL, got "${values['database-url']}"`);
  }
  return {
    shapes: parseShapes(values.shapes),
    rounds: integer('--rounds', values.rounds, 1, 50),
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    natsUrls,
    databaseUrl: values['database-url'],
  };
}

/** `PxS/W[p],...` as shapes (publishers, subscribers, messages under way per publisher, persistent). */
export function parseShapes(text: string): Shape[] {
  const shapes = text.split(',').map((item) => {
    const match = /^(\d+)x(\d+)\/(\d+)(p?)$/.exec(item.trim());
    if (match === null) throw new UsageError(`--shapes: expected PxS/W or PxS/Wp items, got "${item}"`);
    const publishers = integer('--shapes publishers', match[1] ?? '', 1, 100);
    const subscribers = integer('--shapes subscribers', match[2] ?? '', 1, 10_000);
    // The closed loop keeps the broker's queues bounded; far below DeliveryTracker's ring.
    const window = integer('--shapes window', match[3] ?? '', 1, 1000);
    const persistent = match[4] === 'p';
    const label = `${publishers} → ${subscribers}${persistent ? ', persistent' : ''}`;
    return { publishers, subscribers, window, persistent, label };
  });
  if (new Set(shapes.map((shape) => shape.label)).size !== shapes.length) {
    throw new UsageError(`--shapes: each PxS at most once, got "${text}"`);
  }
  return shapes;
}
