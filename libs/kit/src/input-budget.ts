import { type Clock, type TimerHandle } from './clock.js';

/** What a budget pauses when a connection has spent its share: the reads of its socket. */
export interface PausableReader {
  pause(): void;
  resume(): void;
}

export interface InputBudgetLimits {
  /** The fraction of one core a connection's own messages may use, over time (0 < share <= 1). */
  readonly share: number;
  /** Milliseconds of work a connection may run ahead of its share before its reads pause. */
  readonly burstMs: number;
}

/**
 * One connection's share of the event loop. Every protocol shares one loop, so a client whose
 * messages are costly (a SUBSCRIBE of hundreds of wildcard filters, a large document to validate, a
 * flood of cheap ones) delays every other client by what it spends. The time its message handlers
 * take is charged here as debt, paid back at `share` milliseconds per millisecond; past `burstMs` of
 * debt the connection's reads pause until it is paid, so the client is slowed by TCP's own flow
 * control, loses nothing, and can never hold more than its share of the loop for long. Loop time a
 * module spends for the connection after an await (the rows of a MeterValues inserted into SQLite)
 * is charged by the module (Connection.charge); time spent waiting off the loop is not.
 */
export class InputBudget {
  /** Milliseconds of handler time not yet paid back, as of `since`. */
  private debt = 0;
  private since: number;
  private timer: TimerHandle | null = null;

  constructor(
    private readonly limits: InputBudgetLimits,
    private readonly clock: Clock,
    private readonly reader: PausableReader,
    /** Told each time the reads pause, with how long for. */
    private readonly listener: { throttled(ms: number): void },
    /** Owed from the start: what the client's address still owed when this connection opened. */
    initialDebt = 0,
  ) {
    this.since = clock.monotonic();
    this.debt = initialDebt;
  }

  /** What is still owed now. */
  owed(): number {
    return Math.max(0, this.debt - (this.clock.monotonic() - this.since) * this.limits.share);
  }

  /** Adds `ms` of handler time; pauses the reads when the debt passes the burst. */
  charge(ms: number): void {
    const now = this.clock.monotonic();
    this.debt = Math.max(0, this.debt - (now - this.since) * this.limits.share) + ms;
    this.since = now;
    if (this.debt <= this.limits.burstMs || this.timer !== null) return;
    const wait = this.debt / this.limits.share;
    this.reader.pause();
    this.timer = this.clock.after(wait, InputBudget.resume, this);
    this.listener.throttled(wait);
  }

  /** The connection closed: a pending resume is dropped. */
  stop(): void {
    if (this.timer !== null) this.clock.cancel(this.timer);
    this.timer = null;
  }

  private static resume(budget: InputBudget): void {
    budget.timer = null;
    budget.reader.resume();
  }
}
