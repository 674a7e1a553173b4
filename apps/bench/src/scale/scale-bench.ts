import { killChildrenOnExit } from '../child-servers.js';
import { ErrorCounts } from '../load/error-counts.js';
import { expectDelivery } from '../mqtt/mqtt-preflight.js';
import { processRssKiB } from '../protocol-bench/process-memory.js';
import { childFdLimit, checkFdLimit, processFdLimit } from './fd-limit.js';
import { IdlePopulation, type PopulationCounts } from './idle-population.js';
import { measureLatencies } from './latency-probes.js';
import { parseScaleOptions, SCALE_USAGE, type ScaleOptions, type ScaleServer } from './scale-options.js';
import { scaleReport, type ServerResult } from './scale-report.js';
import { startScaleServer } from './scale-servers.js';

export { SCALE_USAGE };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const progress = (text: string): void => console.error(`[scale] ${text}`);

export async function runScaleBench(argv: readonly string[]): Promise<void> {
  const options = parseScaleOptions(argv);
  if (options === null) {
    console.log(SCALE_USAGE);
    return;
  }
  checkFdLimit(options.connections, childFdLimit(), 'A server started from here');
  killChildrenOnExit();
  const results: ServerResult[] = [];
  for (const kind of options.servers) results.push(await runServer(kind, options));
  console.log(scaleReport(results, options));
  if (results.some((r) => r.errors.total > 0)) process.exitCode = 1;
}

/** One server through the whole scenario, in a fresh process. */
async function runServer(kind: ScaleServer, options: ScaleOptions): Promise<ServerResult> {
  const mix = kind === 'mosquitto' ? 'mqtt' : options.mix;
  const server = await startScaleServer(kind, options.connections);
  const { pid, port } = server.process;
  const errors = new ErrorCounts();
  try {
    checkFdLimit(options.connections, processFdLimit(pid), `${kind} (pid ${pid})`);
    await expectDelivery(server);
    await sleep(options.settleMs);
    const rssStartKiB = processRssKiB(pid);
    progress(`${kind}: idle latencies (${options.samples} samples each)`);
    const idle = await measureLatencies(port, options.samples, kind === 'broker', errors, 'idle');
    const rssBeforeKiB = processRssKiB(pid);
    progress(
      `${kind}: opening ${options.connections} idle connections (${mix}) from ${options.addresses} addresses`,
    );
    const opened = await IdlePopulation.open(port, options.connections, options.addresses, mix);
    progress(
      `${kind}: ${opened.counts.open} open in ${(opened.openMs / 1000).toFixed(1)} s, ${opened.counts.errors.total} errors`,
    );
    let final: PopulationCounts | null = null;
    try {
      await sleep(options.settleMs);
      const rssAfterKiB = processRssKiB(pid);
      const settled = await opened.population.status();
      progress(
        `${kind}: RSS ${(rssBeforeKiB / 1024).toFixed(0)} -> ${(rssAfterKiB / 1024).toFixed(0)} MiB; loaded latencies`,
      );
      const loaded = await measureLatencies(port, options.samples, kind === 'broker', errors, 'loaded');
      final = await opened.population.close();
      return {
        kind,
        mix,
        openMs: opened.openMs,
        openAfterSettle: settled.open,
        rssStartKiB,
        rssBeforeKiB,
        rssAfterKiB,
        idle,
        loaded,
        errors,
      };
    } finally {
      // The generators' counts are cumulative: their last report holds every population error.
      final ??= await opened.population.close().catch(() => null);
      for (const [label, count] of final?.errors.byLabel ?? []) errors.add(`population ${label}`, count);
    }
  } finally {
    await server.process.stop();
  }
}
