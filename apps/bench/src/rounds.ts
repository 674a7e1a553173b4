import { cpus } from 'node:os';
import { type ServerProcess } from './child-servers.js';
import { errorCount, type RoundResult } from './report.js';

/**
 * reference, ours, reference, ours, ...: alternating spreads drift (thermal, neighbours) over both.
 * Progress goes to stderr so stdout stays a clean markdown report.
 */
export async function alternateRounds(
  servers: readonly ServerProcess[],
  rounds: number,
  unit: string,
  measure: (server: ServerProcess, round: number) => Promise<RoundResult>,
): Promise<RoundResult[]> {
  const results: RoundResult[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const server of servers) {
      const result = await measure(server, round);
      results.push(result);
      console.error(
        `round ${round}/${rounds} ${server.name}: ${result.rate.toFixed(0)} ${unit}s/s, ` +
          `p99 ${result.p99Ms.toFixed(2)} ms, ${errorCount(result)} errors, load average ${result.loadAverage.toFixed(1)}`,
      );
    }
  }
  return results;
}

/** The machine line every report starts its setup paragraph with. */
export function machine(): string {
  return (
    `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version} ` +
    "(load avg: the box's 1-minute load average at the end of each round)"
  );
}
