import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { type NodeLoadFigures } from './snapshot.types.js';

/** The delay histogram's sampling period. */
const LOOP_RESOLUTION_MS = 10;

/**
 * This process's load for the dashboard's nodes table: CPU since the last reading, resident memory,
 * and the event loop's delay p99 since the last reading. Read from Node itself, not from prom-client's
 * default metrics: those update only as the whole registry is scraped, and reading the loop delay there
 * would reset the window /metrics reports. The delay monitor starts at the first reading (a node whose
 * dashboard nobody opens pays nothing).
 */
export class NodeLoad {
  private last: { cpu: NodeJS.CpuUsage; at: number } | null = null;
  private loop: IntervalHistogram | null = null;

  read(): NodeLoadFigures {
    const at = performance.now();
    const cpu = process.cpuUsage();
    const last = this.last;
    this.last = { cpu, at };
    const share =
      last === null || at <= last.at
        ? null
        : (cpu.user - last.cpu.user + cpu.system - last.cpu.system) / 1000 / (at - last.at);
    let loopDelayP99Ms: number | null = null;
    if (this.loop === null) {
      this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
      this.loop.enable();
    } else if (this.loop.count > 0) {
      // Beyond the sampling period itself: what the loop was late by.
      loopDelayP99Ms = Math.max(0, this.loop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS);
      this.loop.reset();
    }
    return { cpu: share, rssBytes: process.memoryUsage.rss(), loopDelayP99Ms };
  }

  /** Stops the delay monitor (the process is closing). */
  close(): void {
    this.loop?.disable();
    this.loop = null;
  }
}
