import { loadavg } from 'node:os';
import { type ServerProcess } from './child-servers.js';
import { CpuWindow } from './cpu-window.js';
import { runHandshakeLoad } from './handshake-load.js';
import { type RoundResult } from './report.js';
import { summarizeLatencies } from './stats.js';
import { type PreparedUpgrade } from './upgrade-request.js';

export interface RoundSettings {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly timeoutMs: number;
  readonly subprotocol: string;
}

/** One round against one server, with both processes' CPU sampled over the measured window. */
export async function measureRound(
  server: ServerProcess,
  round: number,
  upgrades: readonly PreparedUpgrade[],
  settings: RoundSettings,
): Promise<RoundResult> {
  const cpu = new CpuWindow(server.pid);
  const load = await runHandshakeLoad({
    port: server.port,
    upgrades,
    subprotocol: settings.subprotocol,
    concurrency: settings.concurrency,
    warmupMs: settings.warmupMs,
    durationMs: settings.durationMs,
    timeoutMs: settings.timeoutMs,
    onWindowStart: () => cpu.start(),
    onWindowEnd: () => cpu.end(),
  });
  return roundResult(server.name, round, { ...load, operations: load.handshakes }, cpu);
}

/** What any load loop measured in its window. */
export interface MeasuredLoad {
  /** Completed, correct operations (handshakes, delivered messages, calls) inside the window. */
  readonly operations: number;
  readonly durationMs: number;
  readonly latenciesMs: readonly number[];
  readonly errors: ReadonlyMap<string, number>;
}

export function roundResult(server: string, round: number, load: MeasuredLoad, cpu: CpuWindow): RoundResult {
  const latency = summarizeLatencies(load.latenciesMs);
  return {
    server,
    round,
    rate: load.operations / (load.durationMs / 1000),
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    errors: load.errors,
    ...cpu.shares(load.durationMs, load.operations),
    loadAverage: loadavg()[0] ?? Number.NaN,
  };
}
