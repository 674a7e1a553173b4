import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { type NodeLoadFigures } from './snapshot.types.js';

/** The delay histogram's sampling period. */
const LOOP_RESOLUTION_MS = 10;

/**
 * A reading sooner than this after the last one gives the last figures again: a little under the
 * feed's second, whose readings come that far apart give or take the loop's delay.
 */
const MIN_WINDOW_MS = 900;

/**
 * This process's load for the dashboard's nodes table: CPU since the last reading, resident memory,
 * and the event loop's delay p99 since the last reading. Read from Node itself, not from prom-client's
 * default metrics: those update only as the whole registry is scraped, and reading the loop delay there
 * would reset the window /metrics reports. The delay monitor starts at the first reading (a node whose
 * dashboard nobody opens pays nothing). The feed and GET /admin/v1/nodes both read it: a reading less
 * than MIN_WINDOW_MS after the last gives that one's CPU and delay again (memory fresh) and starts no
 * new window, so that a script polling the route does not shrink the feed's windows to its own.
 */
export class NodeLoad {
  private last: { cpu: NodeJS.CpuUsage; at: number; figures: NodeLoadFigures } | null = null;
  private loop: IntervalHistogram | null = null;

  /** `now`: milliseconds on a monotonic clock (a spec gives its own). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  read(): NodeLoadFigures {
    const at = this.now();
    const last = this.last;
    if (last !== null && at - last.at < MIN_WINDOW_MS) {
      return { ...last.figures, rssBytes: process.memoryUsage.rss() };
    }
    const cpu = process.cpuUsage();
    const share =
      last === null
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
    const figures = { cpu: share, rssBytes: process.memoryUsage.rss(), loopDelayP99Ms };
    this.last = { cpu, at, figures };
    return figures;
  }

  /** Stops the delay monitor (the process is closing). */
  close(): void {
    this.loop?.disable();
    this.loop = null;
  }
}
