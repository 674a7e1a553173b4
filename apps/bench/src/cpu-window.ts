import { ownCpuMs, processCpuMs } from './process-cpu.js';

export interface CpuShares {
  /** CPU used by the server process in the window, as a share of one core; null without /proc. */
  readonly serverCpuShare: number | null;
  /** Server CPU time per operation, in µs: the cost that does not depend on who saturates first. */
  readonly serverCpuUsPerOp: number | null;
  /** The load generator's own share of a core. */
  readonly clientCpuShare: number;
}

/** CPU counters of the server process and of this one, sampled when a measured window opens and closes. */
export class CpuWindow {
  private clientStart = 0;
  private clientEnd = 0;
  private serverStart: number | null = null;
  private serverEnd: number | null = null;

  constructor(private readonly serverPid: number) {}

  start(): void {
    this.clientStart = ownCpuMs();
    this.serverStart = processCpuMs(this.serverPid);
  }

  end(): void {
    this.clientEnd = ownCpuMs();
    this.serverEnd = processCpuMs(this.serverPid);
  }

  shares(durationMs: number, operations: number): CpuShares {
    const serverMs =
      this.serverStart === null || this.serverEnd === null ? null : this.serverEnd - this.serverStart;
    return {
      serverCpuShare: serverMs === null ? null : serverMs / durationMs,
      serverCpuUsPerOp: serverMs === null || operations === 0 ? null : (serverMs * 1000) / operations,
      clientCpuShare: (this.clientEnd - this.clientStart) / durationMs,
    };
  }
}

/** The timing every load loop shares: a warm-up, a measured window, and hooks at its edges. */
export interface WindowOptions {
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Called when the measured window opens and closes, to sample CPU counters. */
  readonly onWindowStart?: () => void;
  readonly onWindowEnd?: () => void;
}
