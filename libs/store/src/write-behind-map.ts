/**
 * The latest value of each key, written behind: set() keeps it in memory, and one write of every
 * unwritten entry starts at most `delayMs` later (one write at a time; a key set twice is written
 * once). Reads see the values not written yet. A failed write keeps its values (unless newer ones
 * came meanwhile), is reported, and is tried again `delayMs` later; close() writes what is left and
 * takes no more.
 */
export class WriteBehindMap<V> {
  private pending = new Map<string, V>();
  private writing = new Map<string, V>();
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly write: (entries: ReadonlyMap<string, V>) => Promise<void>,
    private readonly delayMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

  set(key: string, value: V): void {
    if (this.closed) return;
    this.pending.set(key, value);
    this.schedule();
  }

  get(key: string): V | undefined {
    return this.pending.get(key) ?? this.writing.get(key);
  }

  /** Every value not written yet (or being written), the latest of each key. */
  unwritten(): Map<string, V> {
    return new Map([...this.writing, ...this.pending]);
  }

  /** Writes what is unwritten now; rejects if that write fails. */
  async flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.writeAll();
  }

  /** Takes no more values, then writes what is unwritten. */
  close(): Promise<void> {
    this.closed = true;
    return this.flush();
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => {
      this.timer = null;
      this.writeAll().catch((err: unknown) => {
        this.onError(err);
        if (!this.closed) this.schedule();
      });
    }, this.delayMs).unref();
  }

  private async writeAll(): Promise<void> {
    while (this.inFlight !== null) await this.inFlight.catch(() => undefined);
    if (this.pending.size === 0) return;
    this.writing = this.pending;
    this.pending = new Map();
    this.inFlight = this.write(this.writing);
    try {
      await this.inFlight;
    } catch (err) {
      for (const [key, value] of this.writing) {
        if (!this.pending.has(key)) this.pending.set(key, value);
      }
      throw err;
    } finally {
      this.writing = new Map();
      this.inFlight = null;
    }
  }
}
