/**
 * At most `max` lookups at once: a bound on the JetStream requests that a stream of small client
 * packets can start, whatever their rate.
 */
export class LookupCap {
  private running = 0;

  constructor(readonly max: number) {}

  /** `lookup` started, settling as it does; or null, and nothing started, while `max` are running. */
  run<T>(lookup: () => Promise<T>): Promise<T> | null {
    if (this.running >= this.max) return null;
    this.running++;
    return lookup().finally(() => this.running--);
  }
}
