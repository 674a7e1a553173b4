/**
 * Runs a connection's inbound CALLs one after the other, in arrival order (a MeterValues never
 * overtakes its StartTransaction), with a bound on how many may wait.
 */
export class SerialQueue {
  private tail: Promise<void> = Promise.resolve();
  private waiting = 0;

  constructor(
    private readonly max: number,
    /** Tasks are expected to answer their own failures; this only keeps the chain alive if one does not. */
    private readonly onError: (err: unknown) => void,
  ) {}

  get size(): number {
    return this.waiting;
  }

  /** False when `max` tasks are already waiting or running; the task is then not run. */
  push(task: () => Promise<void>): boolean {
    if (this.waiting >= this.max) return false;
    this.waiting++;
    this.tail = this.tail
      .then(task)
      .catch(this.onError)
      .finally(() => {
        this.waiting--;
      });
    return true;
  }
}
