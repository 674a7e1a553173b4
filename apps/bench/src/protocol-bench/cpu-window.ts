import { ownCpuMs, processCpuMs } from '../process-cpu.js';

export interface CpuShares {
  /** CPU of the server process over the window, as a share of one core; null without /proc. */
  readonly server: number | null;
  /** The load generator's (this process's) share of a core: near 1 means it may be the bottleneck. */
  readonly client: number;
  readonly serverMs: number | null;
}

/** Samples the server's and this process's CPU counters when a measured window opens and closes. */
export class CpuWindow {
  private clientStart = 0;
  private serverStart: number | null = null;
  private startedAt = 0;
  private result: CpuShares | null = null;

  constructor(private readonly serverPid: number) {}

  start(): void {
    this.startedAt = performance.now();
    this.clientStart = ownCpuMs();
    this.serverStart = processCpuMs(this.serverPid);
  }

  stop(): void {
    const elapsed = performance.now() - this.startedAt;
    const serverEnd = processCpuMs(this.serverPid);
    const serverMs = this.serverStart === null || serverEnd === null ? null : serverEnd - this.serverStart;
    this.result = {
      server: serverMs === null ? null : serverMs / elapsed,
      client: (ownCpuMs() - this.clientStart) / elapsed,
      serverMs,
    };
  }

  get shares(): CpuShares {
    if (this.result === null) throw new Error('the CPU window never closed');
    return this.result;
  }
}
