/**
 * Runs a connection's inbound CALLs one after the other, in arrival order (a MeterValues never
 * overtakes its StartTransaction), with a bound on how many may wait. The waiting tasks are an array,
 * not a chain of promises: each CALL costs one `then` on its own task's promise.
 */
export class SerialQueue {
  private readonly waiting: (() => Promise<void>)[] = [];
  private running = false;
  private readonly next = (): void => {
    this.running = false;
    this.runNext();
  };
  private readonly failed = (err: unknown): void => {
    try {
      this.onError(err);
    } finally {
      this.next();
    }
  };

  constructor(
    private readonly max: number,
    /** Tasks are expected to answer their own failures; this only keeps the queue going if one does not. */
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Tasks waiting or running. */
  get size(): number {
    return this.waiting.length + (this.running ? 1 : 0);
  }

  /** False when `max` tasks are already waiting or running; the task is then not run. */
  push(task: () => Promise<void>): boolean {
    if (this.size >= this.max) return false;
    this.waiting.push(task);
    if (!this.running) this.runNext();
    return true;
  }

  private runNext(): void {
    const task = this.waiting.shift();
    if (task === undefined) return;
    this.running = true;
    let done: Promise<void>;
    try {
      done = task();
    } catch (err) {
      done = Promise.reject(err);
    }
    done.then(this.next, this.failed);
  }
}
