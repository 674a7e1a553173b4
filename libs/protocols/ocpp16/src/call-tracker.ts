import { systemClock, type Clock, type TimerHandle } from '#broker/kit';
export class CallTimeoutError extends Error {
  override readonly name = 'CallTimeoutError';
}

export class CallQueueFullError extends Error {
  override readonly name = 'CallQueueFullError';
}

export class ConnectionClosedError extends Error {
  override readonly name = 'ConnectionClosedError';
}

export interface PendingCall {
  readonly id: string;
  readonly action: string;
  resolve(payload: unknown): void;
  reject(err: Error): void;
}

interface Entry extends PendingCall {
  readonly payload: unknown;
  timer: TimerHandle | null;
}

export interface CallTrackerOptions {
  readonly timeoutMs: number;
  /** Calls waiting behind the outstanding one; past that, call() rejects at once. */
  readonly maxQueued: number;
  readonly send: (id: string, action: string, payload: unknown) => void;
  readonly newId: () => string;
  /** Time for the timeouts: systemClock unless given (a ManualClock in the specs). */
  readonly clock?: Clock;
}

/**
 * Our CALLs to one charge point, sans-IO: one outstanding at a time (OCPP-J 1.6 section 4.1.1), the
 * rest queued, each bounded by a timeout that counts from the moment it was asked for, so a caller
 * never waits longer than `timeoutMs` however long the queue.
 */
export class CallTracker {
  private readonly queue: Entry[] = [];
  private current: Entry | null = null;
  private closedWith: Error | null = null;
  private readonly clock: Clock;

  constructor(private readonly options: CallTrackerOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get outstanding(): string | null {
    return this.current?.id ?? null;
  }

  get queued(): number {
    return this.queue.length;
  }

  call(action: string, payload: unknown): Promise<unknown> {
    if (this.closedWith !== null) return Promise.reject(this.closedWith);
    if (this.current !== null && this.queue.length >= this.options.maxQueued) {
      return Promise.reject(new CallQueueFullError(`${this.queue.length} calls are already waiting`));
    }
    return new Promise((resolve, reject) => {
      const entry: Entry = {
        id: this.options.newId(),
        action,
        payload,
        resolve,
        reject,
        timer: null,
      };
      entry.timer = this.clock.after(this.options.timeoutMs, () => this.expire(entry));
      this.queue.push(entry);
      this.next();
    });
  }

  /**
   * The call a CALLRESULT or CALLERROR answers, taken off the tracker so the next one goes out;
   * null when the id is not the outstanding call's (late, duplicate or made up).
   */
  take(id: string): PendingCall | null {
    const entry = this.current;
    if (entry === null || entry.id !== id) return null;
    this.cancelTimer(entry);
    this.current = null;
    this.next();
    return entry;
  }

  /** The connection is gone: every call, outstanding or queued, fails with `reason`. */
  close(reason: Error): void {
    if (this.closedWith !== null) return;
    this.closedWith = reason;
    const all = [...(this.current ? [this.current] : []), ...this.queue.splice(0)];
    this.current = null;
    for (const entry of all) {
      this.cancelTimer(entry);
      entry.reject(reason);
    }
  }

  private cancelTimer(entry: Entry): void {
    if (entry.timer !== null) this.clock.cancel(entry.timer);
    entry.timer = null;
  }

  private next(): void {
    if (this.current !== null || this.closedWith !== null) return;
    const entry = this.queue.shift();
    if (entry === undefined) return;
    this.current = entry;
    try {
      this.options.send(entry.id, entry.action, entry.payload);
    } catch (err) {
      this.current = null;
      this.cancelTimer(entry);
      entry.reject(err as Error);
      this.next();
    }
  }

  private expire(entry: Entry): void {
    if (this.current === entry) {
      this.current = null;
      this.next();
    } else {
      const index = this.queue.indexOf(entry);
      if (index === -1) return;
      this.queue.splice(index, 1);
    }
    entry.reject(new CallTimeoutError(`${entry.action} got no answer within ${this.options.timeoutMs} ms`));
  }
}
