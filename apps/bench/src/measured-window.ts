import { type WindowOptions } from './cpu-window.js';

/**
 * The warm-up and measured window of one round. The end is a timer, not a clock comparison in the
 * load loops: a loop that saw the clock pass the end could finish the round before the end hook
 * ran, and the CPU counters would never be read.
 */
export class MeasuredWindow {
  readonly start: number;
  readonly end: number;
  private open = true;
  private readonly timers: NodeJS.Timeout[];

  /** `ended` runs right after the end hook, when the loops must stop issuing new work. */
  constructor(options: WindowOptions, ended: () => void = () => {}) {
    this.start = performance.now() + options.warmupMs;
    this.end = this.start + options.durationMs;
    this.timers = [
      setTimeout(() => options.onWindowStart?.(), options.warmupMs),
      setTimeout(() => {
        options.onWindowEnd?.();
        this.open = false;
        ended();
      }, options.warmupMs + options.durationMs),
    ];
  }

  /** False once the window has ended: no new operations. */
  get issuing(): boolean {
    return this.open;
  }

  /** Whether an operation completed at `at` (performance.now()) counts. */
  contains(at: number): boolean {
    return at >= this.start && at < this.end;
  }

  /** For a round that ends early (an error): the hooks do not run any more. */
  cancel(): void {
    this.open = false;
    for (const timer of this.timers) clearTimeout(timer);
  }
}
