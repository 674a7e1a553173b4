import { type Clock, type TimerHandle } from './clock.js';

class ManualTimer implements TimerHandle {
  active = true;
  /** Cancelled: a refresh no longer arms it (as Node's refresh after clearTimeout). */
  cancelled = false;

  constructor(
    private readonly clock: ManualClock,
    private readonly ms: number,
    readonly run: () => void,
    public due: number,
  ) {}

  /** Pushes the timer back to its full delay from now; a timer that ran is armed again (as Node's). */
  refresh(): this {
    this.due = this.clock.now() + this.ms;
    if (!this.active && !this.cancelled) {
      this.active = true;
      this.clock.rearm(this);
    }
    return this;
  }
}

/** A Clock for specs: time moves only when `advance` says, and due timers run in order of their time. */
export class ManualClock implements Clock {
  private current: number;
  private timers: ManualTimer[] = [];

  constructor(start = 1_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** The same time: a ManualClock never jumps. */
  monotonic(): number {
    return this.current;
  }

  after<A>(ms: number, fn: (arg: A) => void, arg?: A): TimerHandle {
    const timer = new ManualTimer(this, ms, () => fn(arg as A), this.current + ms);
    this.timers.push(timer);
    return timer;
  }

  cancel(timer: TimerHandle): void {
    if (!(timer instanceof ManualTimer)) return;
    timer.active = false;
    timer.cancelled = true;
  }

  /** A timer that ran, armed again by its refresh. */
  rearm(timer: TimerHandle): void {
    if (timer instanceof ManualTimer && !this.timers.includes(timer)) this.timers.push(timer);
  }

  /** Timers not yet run nor cancelled. */
  get pending(): number {
    return this.timers.filter((t) => t.active).length;
  }

  /** Moves time forward by `ms`, running each timer that falls due on the way, earliest first. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => t.active);
      const next = this.timers.reduce<ManualTimer | null>(
        (earliest, t) => (t.due <= target && (earliest === null || t.due < earliest.due) ? t : earliest),
        null,
      );
      if (next === null) break;
      this.current = next.due;
      next.active = false;
      next.run();
    }
    this.current = target;
  }
}
