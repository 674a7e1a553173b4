/** What a timer started by a Clock gives back: it can be pushed back to its full delay from now. */
export interface TimerHandle {
  refresh(): unknown;
}

/**
 * Time as protocol cores see it: injected, so a core never calls setTimeout or Date.now itself and a
 * spec drives it with a ManualClock instead of patching the process's timers.
 */
export interface Clock {
  /** Milliseconds since the epoch (wall-clock time, for what is stored or sent). */
  now(): number;
  /** Milliseconds on a clock that never jumps (performance.now), for measuring how long a wait took. */
  monotonic(): number;
  /** Calls `fn(arg)` once after `ms` (an argument instead of a closure: one timer per idle connection). */
  after<A>(ms: number, fn: (arg: A) => void, arg: A): TimerHandle;
  after(ms: number, fn: () => void): TimerHandle;
  cancel(timer: TimerHandle): void;
}

/** Node's timers, unref'd (a pending timer never keeps the process alive), and the system time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  after<A>(ms: number, fn: (arg: A) => void, arg?: A): TimerHandle {
    const timer = setTimeout(fn, ms, arg as A);
    timer.unref();
    return timer;
  },
  cancel(timer: TimerHandle): void {
    clearTimeout(timer as NodeJS.Timeout);
  },
};
