import { loadavg } from 'node:os';
import { type ServerProcess } from '../child-servers.js';
import { prepareRun } from './bench-run.js';
import { integer, parseFlags, seconds, UsageError } from '../cli-options.js';
import { errorTotal, fixed, markdownTable, percent } from '../protocol-bench/markdown.js';
import { machine } from '../rounds.js';
import { median } from '../stats.js';
import { parseShapes, type Shape } from './cluster-options.js';
import {
  createSchema,
  releaseOnExit,
  releaseResources,
  runToken,
  type ClusterResources,
} from './cluster-resources.js';
import { startNode } from './cluster-setups.js';
import { measureTraffic, preflightTraffic } from './measured-traffic.js';
import { startNatsMqttCluster } from './nats-mqtt-cluster.js';

export const QOS1_USAGE = `Usage: node dist/apps/bench/src/main.js cluster-qos1 [options]

MQTT QoS 1 across two nodes over WebSocket, publishers on the first node and subscribers on the
second: this broker's two cluster nodes against nats-server's own MQTT support, both on the same two
nats-servers (routed, JetStream file store, replicas 1) that the run starts. Needs PostgreSQL; the
run's schema is dropped at the end.

  --shapes <list>      comma-separated PxS/W: P publishers to S subscribers on one topic, W messages
                       under way per publisher; a trailing p gives the subscribers persistent
                       sessions (default 10x1/50,1x100/5,10x1/50p: fan-in, fan-out, and fan-in to a
                       persistent session, which the broker feeds from its JetStream stream)
  --inflight <n>       QoS 1 messages sent to a subscriber and not yet acknowledged, in both set-ups:
                       the broker's mqtt.maxInflight and nats-server's mqtt.max_ack_pending (default
                       32, the broker's default; nats-server's own is 1024)
  --rounds <n>         rounds per set-up and shape (default 3)
  --warmup <s>         unmeasured seconds before each measurement (default 1)
  --duration <s>       measured seconds per measurement (default 4)
  --database-url <u>   PostgreSQL server (default $DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test)
  --help               this text`;

/** The broker across two nodes keeps at least this share of nats-server's MQTT rate. */
export const QOS1_TARGET = 1.0;

const TIMEOUT_MS = 10_000;
const PREFLIGHT = { warmupMs: 0, durationMs: 500 };

type SetupId = 'broker' | 'nats';
const LABELS: Readonly<Record<SetupId, string>> = {
  broker: 'this broker, 2 nodes',
  nats: 'nats-server MQTT, 2 servers',
};

interface Qos1Options {
  readonly shapes: readonly Shape[];
  readonly inflight: number;
  readonly rounds: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly databaseUrl: string;
}

interface Setup {
  readonly id: SetupId;
  readonly publisherUrl: string;
  readonly subscriberUrl: string;
  /** Every process serving it (for the broker: its nodes and the nats-servers under them). */
  readonly processes: readonly ServerProcess[];
}

interface Row {
  readonly round: number;
  readonly shape: Shape;
  readonly setup: SetupId;
  readonly rate: number;
  /** CPU of every process of the set-up over the window, summed, as a share of one core. */
  readonly cpu: number | null;
  readonly cpuUsPerMessage: number | null;
  readonly published: number;
  readonly received: number;
  readonly errors: ReadonlyMap<string, number>;
  readonly loadAverage: number;
}

function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): Qos1Options | null {
  const values = parseFlags(argv, {
    shapes: '10x1/50,1x100/5,10x1/50p',
    inflight: '32',
    rounds: '3',
    warmup: '1',
    duration: '4',
    'database-url': env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test',
  });
  if (values === null) return null;
  if (!/^postgres(ql)?:\/\//.test(values['database-url'])) {
    throw new UsageError(`--database-url: expected a postgres:// URL, got "${values['database-url']}"`);
  }
  return {
    shapes: parseShapes(values.shapes),
    inflight: integer('--inflight', values.inflight, 1, 65535),
    rounds: integer('--rounds', values.rounds, 1, 50),
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    databaseUrl: values['database-url'],
  };
}

export async function runQos1Bench(argv: readonly string[]): Promise<void> {
  const options = parseOptions(argv, process.env);
  if (options === null) {
    console.log(QOS1_USAGE);
    return;
  }
  const dir = await prepareRun('cluster-qos1-bench');
  const started: ServerProcess[] = [];
  // The nats-servers are the run's own: only the schema outlives them.
  const resources: ClusterResources = {
    natsUrls: [],
    databaseUrl: options.databaseUrl,
    schemas: [],
    clusterNames: [],
  };
  const exitCleanup = releaseOnExit(resources);
  const rows: Row[] = [];
  try {
    const setups = await startSetups(dir, resources, started, options.inflight);
    for (const setup of setups) await preflight(setup, options);
    for (let round = 1; round <= options.rounds; round++) {
      for (const shape of options.shapes) {
        // Alternating which goes first spreads drift over both.
        const order = round % 2 === 1 ? setups : [...setups].reverse();
        for (const setup of order) {
          const row = await measure(setup, shape, round, options);
          rows.push(row);
          console.error(
            `round ${round} ${shape.label} ${LABELS[setup.id]}: ${row.rate.toFixed(0)} msg/s, CPU ` +
              `${Math.round((row.cpu ?? 0) * 100)} %, ${errorTotal(row.errors)} errors`,
          );
        }
      }
    }
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    const problems = await releaseResources(resources);
    exitCleanup.released();
    for (const problem of problems) console.error(problem);
    if (problems.length > 0) process.exitCode = 1;
  }
  console.log(report(options, rows));
  if (rows.some((row) => errorTotal(row.errors) > 0)) process.exitCode = 1;
}

/** Two nats-servers; the broker's n1 on the first, n2 on the second, as nats-server's MQTT clients are. */
async function startSetups(
  dir: string,
  resources: ClusterResources,
  started: ServerProcess[],
  inflight: number,
): Promise<Setup[]> {
  const nats = await startNatsMqttCluster(2, dir, started, inflight);
  const token = runToken();
  const databaseUrl = await createSchema(resources, `bench_qos1_${token}`);
  const cluster = { cluster: { name: `bench-qos1-${token}` }, mqtt: { maxInflight: inflight } };
  const env = (i: number): Record<string, string> => ({
    NATS_URL: nats.natsUrls[i] as string,
    DATABASE_URL: databaseUrl,
    NODE_ID: `n${i + 1}`,
  });
  // One at a time: the first runs the store's migrations.
  const n1 = await startNode({ dir }, 'qos1-n1', cluster, env(0), started);
  const n2 = await startNode({ dir }, 'qos1-n2', cluster, env(1), started);
  return [
    {
      id: 'broker',
      publisherUrl: n1.url,
      subscriberUrl: n2.url,
      processes: [n1.process, n2.process, ...nats.processes],
    },
    {
      id: 'nats',
      publisherUrl: nats.mqttUrls[0] as string,
      subscriberUrl: nats.mqttUrls[1] as string,
      processes: nats.processes,
    },
  ];
}

function trafficOf(setup: Setup, shape: Shape, topic: string, options: Qos1Options) {
  return {
    url: setup.subscriberUrl,
    publisherUrl: setup.publisherUrl,
    serverPid: (setup.processes[0] as ServerProcess).pid,
    topic,
    qos: 1 as const,
    publishers: shape.publishers,
    subscribers: shape.subscribers,
    load: { kind: 'closed' as const, window: shape.window },
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    timeoutMs: TIMEOUT_MS,
    batchWrites: true,
    persistent: shape.persistent,
  };
}

async function measure(setup: Setup, shape: Shape, round: number, options: Qos1Options): Promise<Row> {
  const topic = `bench/${round}/${shape.publishers}x${shape.subscribers}/${setup.id}`;
  const { result, errors, cpu, cpuUsPerMessage } = await measureTraffic(
    trafficOf(setup, shape, topic, options),
    setup.processes,
  );
  return {
    round,
    shape,
    setup: setup.id,
    rate: result.deliveriesPerSec,
    cpu,
    cpuUsPerMessage,
    published: result.published,
    received: result.received,
    errors,
    loadAverage: loadavg()[0] ?? Number.NaN,
  };
}

/** Before any timing: every message must reach every subscriber across the two nodes. */
async function preflight(setup: Setup, options: Qos1Options): Promise<void> {
  const shape = options.shapes[0] as Shape;
  await preflightTraffic(LABELS[setup.id], {
    ...trafficOf(setup, shape, `preflight/${setup.id}`, options),
    ...PREFLIGHT,
  });
}

function report(options: Qos1Options, rows: readonly Row[]): string {
  const roundsTable = markdownTable(
    [
      'round',
      'shape',
      'set-up',
      'messages delivered/s',
      'CPU',
      'CPU µs/message',
      'sent × subscribers',
      'received',
      'errors',
      'load avg',
    ],
    'rllrrrrrrr',
    rows.map((r) => [
      String(r.round),
      r.shape.label,
      LABELS[r.setup],
      fixed(r.rate, 0),
      percent(r.cpu),
      fixed(r.cpuUsPerMessage, 2),
      String(r.published * r.shape.subscribers),
      String(r.received),
      String(errorTotal(r.errors)),
      fixed(r.loadAverage, 1),
    ]),
  );
  const summary: string[][] = [];
  const verdicts: string[] = [];
  for (const shape of options.shapes) {
    const of = (id: SetupId): Row[] => rows.filter((r) => r.shape.label === shape.label && r.setup === id);
    const broker = of('broker');
    const nats = of('nats');
    const ratios = broker.flatMap((b) => {
      const n = nats.find((r) => r.round === b.round);
      return n === undefined || n.rate === 0 ? [] : [b.rate / n.rate];
    });
    const ratio = ratios.length === 0 ? Number.NaN : median(ratios);
    const errors = [...broker, ...nats].reduce((n, r) => n + errorTotal(r.errors), 0);
    const cpuOf = (list: Row[]): number | null => {
      const values = list.flatMap((r) => (r.cpuUsPerMessage === null ? [] : [r.cpuUsPerMessage]));
      return values.length === 0 ? null : median(values);
    };
    summary.push([
      shape.label,
      fixed(median(broker.map((r) => r.rate)), 0),
      fixed(median(nats.map((r) => r.rate)), 0),
      `**${fixed(ratio, 2)}×**`,
      ratios.length === 0 ? '' : `${Math.min(...ratios).toFixed(2)}× to ${Math.max(...ratios).toFixed(2)}×`,
      fixed(cpuOf(broker), 2),
      fixed(cpuOf(nats), 2),
      String(errors),
    ]);
    const verdict =
      errors > 0
        ? `NOT met: ${errors} errors (lost, repeated or reordered messages, dropped connections), so the rates do not count.`
        : ratio >= QOS1_TARGET
          ? 'met.'
          : 'NOT met.';
    verdicts.push(
      `${shape.label}, median of the per-round ratios: this broker / nats-server MQTT = ${ratio.toFixed(2)}× (target ≥ ${QOS1_TARGET}): ${verdict}`,
      '',
    );
  }
  const errorLines = rows.flatMap((r) =>
    [...r.errors].map(
      ([label, count]) => `- round ${r.round}, ${r.shape.label}, ${LABELS[r.setup]}: ${label} × ${count}`,
    ),
  );
  return [
    '## Cluster: MQTT QoS 1 across two nodes, against nats-server MQTT',
    '',
    `${machine()}. QoS 1, MQTT 3.1.1 over WebSocket, clean sessions (persistent where a shape says so), 64-byte payloads, one topic; closed loop: ` +
      `${options.shapes.map((s) => `${s.label} with ${s.window} under way per publisher`).join(', ')}; ` +
      `${options.inflight} unacknowledged per subscriber in both (mqtt.maxInflight, mqtt.max_ack_pending). ` +
      `${options.rounds} rounds per shape and set-up, alternating which goes first, ${options.warmupMs / 1000} s warm-up + ` +
      `${options.durationMs / 1000} s measured. Publishers on the first node, subscribers on the second; two ` +
      'nats-servers routed into one NATS cluster (JetStream file store, replicas 1) under both. CPU: every process of ' +
      'the set-up summed (for this broker its two nodes and the nats-servers).',
    '',
    roundsTable,
    '',
    markdownTable(
      [
        'shape',
        'this broker msg/s',
        'nats-server msg/s',
        'broker / nats-server, median',
        'range',
        'broker CPU µs/msg',
        'nats-server CPU µs/msg',
        'errors',
      ],
      'lrrrrrrr',
      summary,
    ),
    '',
    ...verdicts,
    errorLines.length === 0
      ? 'Errors: none (every subscriber received every message once, in order).'
      : ['Errors:', ...errorLines].join('\n'),
  ].join('\n');
}
