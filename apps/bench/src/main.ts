import { USAGE, UsageError } from './cli-options.js';
import { CLUSTER_USAGE, runClusterBench } from './cluster/cluster-bench.js';
import { DASHBOARD_USAGE, runDashboardBench } from './dashboard/dashboard-bench.js';
import { QOS1_USAGE, runQos1Bench } from './cluster/qos1-bench.js';
import { DEFLATE_USAGE, runDeflateBench } from './deflate/deflate-bench.js';
import { GRAPHQL_USAGE, runGraphqlBench } from './graphql/graphql-bench.js';
import { runHandshakeBench } from './handshake-bench.js';
import { runWampBench, WAMP_USAGE } from './wamp/wamp-bench.js';
import { runScaleBench, SCALE_USAGE } from './scale/scale-bench.js';
import { runShutdownBench, SHUTDOWN_USAGE } from './shutdown/shutdown-bench.js';
import { runSlowConsumerBench, SLOW_USAGE } from './slow/slow-consumer-bench.js';
import { runSoakBench, SOAK_USAGE } from './soak/soak-bench.js';
import { runWorstBench, WORST_USAGE } from './worst/worst-bench.js';

interface Bench {
  readonly usage: string;
  run(argv: readonly string[]): Promise<void>;
}

const BENCHES: Readonly<Record<string, Bench>> = {
  handshake: { usage: USAGE, run: runHandshakeBench },
  graphql: { usage: GRAPHQL_USAGE, run: runGraphqlBench },
  wamp: { usage: WAMP_USAGE, run: runWampBench },
  cluster: { usage: CLUSTER_USAGE, run: runClusterBench },
  'cluster-qos1': { usage: QOS1_USAGE, run: runQos1Bench },
  deflate: { usage: DEFLATE_USAGE, run: runDeflateBench },
  worst: { usage: WORST_USAGE, run: runWorstBench },
  slow: { usage: SLOW_USAGE, run: runSlowConsumerBench },
  soak: { usage: SOAK_USAGE, run: runSoakBench },
  scale: { usage: SCALE_USAGE, run: runScaleBench },
  dashboard: { usage: DASHBOARD_USAGE, run: runDashboardBench },
  shutdown: { usage: SHUTDOWN_USAGE, run: runShutdownBench },
};

/** `main.js [handshake|graphql|wamp|cluster|cluster-qos1|deflate|worst|slow|soak|scale|dashboard|shutdown] [options]`; with no name (or only flags) it is the handshake benchmark. */
async function main(): Promise<void> {
  const [first, ...rest] = process.argv.slice(2);
  const named = first !== undefined ? BENCHES[first] : undefined;
  const bench = named ?? (BENCHES['handshake'] as Bench);
  const argv = named === undefined ? process.argv.slice(2) : rest;
  try {
    await bench.run(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    console.error(`${err.message}\n\n${bench.usage}`);
    process.exitCode = 2;
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
