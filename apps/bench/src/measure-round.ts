import { type ServerProcess } from './child-servers.js';
import { runHandshakeLoad } from './handshake-load.js';
import { ownCpuMs, processCpuMs } from './process-cpu.js';
import { summarizeLatencies } from './stats.js';
import { type PreparedUpgrade } from './upgrade-request.js';

export interface RoundSettings {
  readonly concurrency: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly timeoutMs: number;
  readonly subprotocol: string;
}

export interface RoundResult {
  readonly server: string;
  readonly round: number;
  readonly rate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: ReadonlyMap<string, number>;
  /** CPU used by the server process in the window, as a share of one core; null without /proc. */
  readonly serverCpuShare: number | null;
  /** Server CPU time per handshake: the cost that does not depend on who saturates first. */
  readonly serverCpuUsPerHandshake: number | null;
  readonly clientCpuShare: number;
}

/** One round against one server, with both processes' CPU sampled over the measured window. */
export async function measureRound(
  server: ServerProcess,
  round: number,
  upgrades: readonly PreparedUpgrade[],
  settings: RoundSettings,
): Promise<RoundResult> {
  const cpu = {
    clientStart: 0,
    clientEnd: 0,
    serverStart: null as number | null,
    serverEnd: null as number | null,
  };
  const load = await runHandshakeLoad({
    port: server.port,
    upgrades,
    subprotocol: settings.subprotocol,
    concurrency: settings.concurrency,
    warmupMs: settings.warmupMs,
    durationMs: settings.durationMs,
    timeoutMs: settings.timeoutMs,
    onWindowStart: () => {
      cpu.clientStart = ownCpuMs();
      cpu.serverStart = processCpuMs(server.pid);
    },
    onWindowEnd: () => {
      cpu.clientEnd = ownCpuMs();
      cpu.serverEnd = processCpuMs(server.pid);
    },
  });
  const latency = summarizeLatencies(load.latenciesMs);
  const serverCpuMs =
    cpu.serverStart === null || cpu.serverEnd === null ? null : cpu.serverEnd - cpu.serverStart;
  return {
    server: server.name,
    round,
    rate: load.handshakes / (load.durationMs / 1000),
    p50Ms: latency.p50,
    p99Ms: latency.p99,
    errors: load.errors,
    serverCpuShare: serverCpuMs === null ? null : serverCpuMs / load.durationMs,
    serverCpuUsPerHandshake:
      serverCpuMs === null || load.handshakes === 0 ? null : (serverCpuMs * 1000) / load.handshakes,
    clientCpuShare: (cpu.clientEnd - cpu.clientStart) / load.durationMs,
  };
}
