import { writeBrokerConfig } from './broker-config.js';
import {
  freePort,
  killChildrenOnExit,
  startBrokerServer,
  startScriptServer,
  type ServerProcess,
} from './child-servers.js';
import { integer, seconds } from './cli-options.js';
import { type RoundResult } from './report.js';

/** The flags every protocol benchmark takes, with their defaults. */
export const ROUND_FLAGS = { duration: '5', warmup: '1', rounds: '3' } as const;

export interface RoundOptions {
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly rounds: number;
}

export function roundOptions(values: Readonly<Record<keyof typeof ROUND_FLAGS, string>>): RoundOptions {
  return {
    durationMs: seconds('--duration', values.duration, 0.1) * 1000,
    warmupMs: seconds('--warmup', values.warmup, 0) * 1000,
    rounds: integer('--rounds', values.rounds, 1, 50),
  };
}

export interface Contenders {
  /** A reference server script of this package, run with PORT set. */
  readonly reference: { readonly name: string; readonly script: URL };
  /** The broker's configuration for a port. */
  readonly brokerConfig: (port: number) => object;
}

/**
 * Starts the reference and the broker in their own processes, runs the benchmark, and stops both
 * whatever happens (Ctrl-C included). Any error counted in any round makes the exit code 1.
 */
export async function withContenders(
  contenders: Contenders,
  run: (reference: ServerProcess, broker: ServerProcess) => Promise<readonly RoundResult[]>,
): Promise<void> {
  killChildrenOnExit();
  const servers: ServerProcess[] = [];
  try {
    const reference = await startScriptServer(contenders.reference.name, contenders.reference.script);
    servers.push(reference);
    const brokerPort = await freePort();
    const configFile = await writeBrokerConfig(contenders.brokerConfig(brokerPort));
    const broker = await startBrokerServer(configFile, brokerPort);
    servers.push(broker);
    const results = await run(reference, broker);
    if (results.some((r) => r.errors.size > 0)) process.exitCode = 1;
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
}
