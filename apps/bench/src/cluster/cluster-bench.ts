import { loadavg } from 'node:os';
import { type ServerProcess } from '../child-servers.js';
import { prepareRun } from './bench-run.js';
import { type TrafficOptions } from '../mqtt/traffic.js';
import { errorTotal } from '../protocol-bench/markdown.js';
import { machine } from '../rounds.js';
import {
  CLUSTER_USAGE,
  parseClusterOptions,
  type ClusterBenchOptions,
  type Shape,
} from './cluster-options.js';
import { errorsList, roundsTable, summaryTable, verdicts, type ClusterRow } from './cluster-report.js';
import {
  expectNatsWithJetStream,
  releaseOnExit,
  releaseResources,
  runToken,
  type ClusterResources,
} from './cluster-resources.js';
import { SETUP_IDS, startSetup, type Setup } from './cluster-setups.js';
import { measureTraffic, preflightTraffic } from './measured-traffic.js';

export { CLUSTER_USAGE };

const TIMEOUT_MS = 10_000;
/** The preflight: a short run per set-up with two subscribers, checked before any timing. */
const PREFLIGHT = { subscribers: 2, warmupMs: 0, durationMs: 500 };

export async function runClusterBench(argv: readonly string[]): Promise<void> {
  const options = parseClusterOptions(argv, process.env);
  if (options === null) {
    console.log(CLUSTER_USAGE);
    return;
  }
  const dir = await prepareRun('cluster-bench');
  const resources: ClusterResources = {
    natsUrls: options.natsUrls,
    databaseUrl: options.databaseUrl,
    schemas: [],
    clusterNames: [],
  };
  const exitCleanup = releaseOnExit(resources);
  const started: ServerProcess[] = [];
  const rows: ClusterRow[] = [];
  try {
    await expectNatsWithJetStream(options.natsUrls);
    const context = { dir, token: runToken(), resources };
    const setups: Setup[] = [];
    for (const id of SETUP_IDS) setups.push(await startSetup(id, context, started));
    for (const setup of setups) await preflight(setup, options);
    // Per round and shape the three set-ups back to back, in the order a b c, then b c a, c a b, ...:
    // each takes each place (drift on a shared box, the load generator's own GC).
    for (let round = 1; round <= options.rounds; round++) {
      for (const shape of options.shapes) {
        for (let i = 0; i < setups.length; i++) {
          const setup = setups[(round - 1 + i) % setups.length] as Setup;
          const row = await measure(setup, shape, round, options);
          rows.push(row);
          console.error(
            `round ${round} ${shape.label} ${setup.label}: ${row.deliveriesPerSec.toFixed(0)} msg/s, broker CPU ` +
              `${Math.round((row.brokerCpu ?? 0) * 100)} %, client CPU ${Math.round(row.clientCpu * 100)} %, ` +
              `${errorTotal(row.errors)} errors`,
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
  printReport(options, rows);
  if (rows.some((row) => errorTotal(row.errors) > 0)) process.exitCode = 1;
}

function traffic(setup: Setup, shape: Shape, topic: string, options: ClusterBenchOptions): TrafficOptions {
  return {
    url: setup.subscriberUrl,
    publisherUrl: setup.publisherUrl,
    serverPid: (setup.processes[setup.processes.length - 1] as ServerProcess).pid,
    topic,
    qos: 0,
    publishers: shape.publishers,
    subscribers: shape.subscribers,
    load: { kind: 'closed', window: shape.window },
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    timeoutMs: TIMEOUT_MS,
    batchWrites: true,
    persistent: shape.persistent,
  };
}

/** One round of one set-up: fresh clients, a closed-loop fan-out, every broker process's CPU over the window. */
async function measure(
  setup: Setup,
  shape: Shape,
  round: number,
  options: ClusterBenchOptions,
): Promise<ClusterRow> {
  const topic = `bench/${round}/${shape.publishers}x${shape.subscribers}/${setup.id}`;
  const { result, errors, cpu, cpuUsPerMessage } = await measureTraffic(
    traffic(setup, shape, topic, options),
    setup.processes,
  );
  return {
    round,
    setup: setup.id,
    shape,
    deliveriesPerSec: result.deliveriesPerSec,
    brokerCpu: cpu,
    brokerCpuUsPerMessage: cpuUsPerMessage,
    clientCpu: result.cpu.client,
    published: result.published,
    received: result.received,
    errors,
    loadAverage: loadavg()[0] ?? Number.NaN,
  };
}

/** Before any timing: messages must flow, each one to every subscriber, from the publishers' node to theirs. */
async function preflight(setup: Setup, options: ClusterBenchOptions): Promise<void> {
  const shape = options.shapes[0] as Shape;
  await preflightTraffic(setup.label, {
    ...traffic(setup, shape, `preflight/${setup.id}`, options),
    ...PREFLIGHT,
  });
}

function printReport(options: ClusterBenchOptions, rows: readonly ClusterRow[]): void {
  const shapes = options.shapes.map((s) => `${s.label} with ${s.window} under way per publisher`).join(', ');
  console.log(
    [
      '## Cluster: MQTT QoS 0 fan-out on one process, one cluster node, two cluster nodes',
      '',
      `${machine()}. QoS 0, MQTT 3.1.1 over WebSocket, 64-byte payloads, one topic; closed loop: ${shapes}. ` +
        `${options.rounds} rounds per shape and set-up, the set-ups in rotating order, ` +
        `${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured. (a) one process, ` +
        `SQLite; (b) one cluster node; (c) two cluster nodes, publishers on n1, subscribers on n2; NATS ` +
        `${options.natsUrls.join(', ')}. Broker CPU: the set-up's broker processes summed (not nats-server).`,
      '',
      roundsTable(rows),
      '',
      summaryTable(options.shapes, rows),
      '',
      ...verdicts(options.shapes, rows),
      errorsList(rows),
    ].join('\n'),
  );
}
