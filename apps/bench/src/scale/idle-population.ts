import { type ChildProcess } from 'node:child_process';
import { forkLoadProcess, nextMessage } from '../child-servers.js';
import { ErrorCounts } from '../load/error-counts.js';
import { type GeneratorCommand, type GeneratorJob, type GeneratorReport } from './generator-ipc.js';
import { generatorShares, type Mix } from './scale-options.js';

/** Handshakes under way per generator process: the population opens steadily, not as a storm. */
const PARALLEL = 200;
const HANDSHAKE_TIMEOUT_MS = 30_000;
const ANSWER_TIMEOUT_MS = 30_000;

export interface PopulationCounts {
  readonly open: number;
  readonly errors: ErrorCounts;
}

/** The idle connections, held by generator processes of SOCKETS_PER_GENERATOR sockets at most each. */
export class IdlePopulation {
  private constructor(private readonly children: readonly ChildProcess[]) {}

  /** Forks the generators and waits until each has tried all its connections; `openMs` is the slowest's. */
  static async open(
    port: number,
    connections: number,
    addresses: number,
    mix: Mix,
  ): Promise<{ population: IdlePopulation; openMs: number; counts: PopulationCounts }> {
    const children = generatorShares(connections).map(([start, count]) => {
      const job: GeneratorJob = {
        port,
        start,
        count,
        addresses,
        mix,
        parallel: PARALLEL,
        timeoutMs: HANDSHAKE_TIMEOUT_MS,
      };
      return forkLoadProcess(new URL('./idle-generator.js', import.meta.url), [JSON.stringify(job)]);
    });
    // Opening 15000 connections on a loaded machine takes a while: no answer timeout here.
    const reports = await Promise.all(
      children.map((child) =>
        nextMessage<GeneratorReport>(child, 'generator process', 'answering', Infinity),
      ),
    );
    const population = new IdlePopulation(children);
    return { population, openMs: Math.max(...reports.map((r) => r.openMs)), counts: sum(reports) };
  }

  /** Connections open now, and every error so far (failed handshakes, closes). */
  async status(): Promise<PopulationCounts> {
    return sum(await this.ask('status'));
  }

  /** Closes every connection and ends the generators; returns the final counts before closing. */
  async close(): Promise<PopulationCounts> {
    return sum(await this.ask('stop'));
  }

  private ask(type: GeneratorCommand['type']): Promise<GeneratorReport[]> {
    return Promise.all(
      this.children.map((child) => {
        const answer = nextMessage<GeneratorReport>(
          child,
          'generator process',
          'answering',
          ANSWER_TIMEOUT_MS,
        );
        child.send({ type } satisfies GeneratorCommand);
        return answer;
      }),
    );
  }
}

function sum(reports: readonly GeneratorReport[]): PopulationCounts {
  const errors = new ErrorCounts();
  let open = 0;
  for (const r of reports) {
    open += r.open;
    for (const [label, count] of r.errors) errors.add(label, count);
  }
  return { open, errors };
}
