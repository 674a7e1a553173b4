interface Entry<Item> {
  readonly item: Item;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: items are written in batches, and each caller's promise settles only once the write
 * that carries its item has committed. Nothing is acknowledged before it is stored, yet a burst of
 * small writes (a thousand charge points' heartbeats) costs one commit instead of one each. One write
 * is in flight at a time: the items of a tick are written at its end, and whatever arrives while a
 * write is under way (over any number of ticks: PostgreSQL answers over the network) waits for it
 * and goes in the next batch, so a slow commit makes batches larger, not more numerous. A batch that
 * fails is retried item by item, so a bad item fails only its own caller.
 *
 * With `minIntervalMs` (a commit delay, like PostgreSQL's commit_delay), writes start at least that
 * far apart while items keep coming, unless a batch is full: under load the same items go in fewer,
 * larger commits (a SQLite commit costs per page written and per flush, not per row), for at most that
 * much more latency. After a quiet spell the first item is written at once.
 */
export class GroupCommit<Item> {
  private readonly pending: Entry<Item>[] = [];
  /** A flush is due: at the end of this tick, or when the commit delay is over. */
  private scheduled = false;
  private delay: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private lastStart = -Infinity;

  constructor(
    private readonly write: (items: readonly Item[]) => Promise<void>,
    private readonly maxBatch: number,
    private readonly minIntervalMs = 0,
  ) {}

  add(item: Item): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      // A write in flight starts the next batch when it ends; a full batch does not wait for the delay.
      if (this.writing === null && (!this.scheduled || this.pending.length === this.maxBatch)) {
        this.scheduled = true;
        setImmediate(() => this.flush(false));
      }
    });
  }

  /** Resolves once everything added so far has been written (or has failed): call before closing. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.writing === null) this.flush(true);
      if (this.writing === null) return;
      await this.writing;
    }
  }

  /**
   * Starts writing the next batch, unless a write is in flight (its end starts the next one) or,
   * short of a full batch, the commit delay since the last write began is not over (`now` skips it).
   */
  private flush(now: boolean): void {
    this.scheduled = false;
    if (this.writing !== null || this.pending.length === 0) return;
    const full = this.pending.length >= this.maxBatch;
    const wait = now || full ? 0 : this.lastStart + this.minIntervalMs - performance.now();
    if (wait > 0) {
      this.scheduled = true;
      this.delay ??= setTimeout(() => {
        this.delay = null;
        this.flush(false);
      }, wait);
      return;
    }
    if (this.delay !== null) clearTimeout(this.delay);
    this.delay = null;
    this.lastStart = performance.now();
    const batch = this.pending.splice(0, this.maxBatch);
    this.writing = this.commit(batch).then(() => {
      this.writing = null;
      this.flush(false);
    });
  }

  private async commit(entries: readonly Entry<Item>[]): Promise<void> {
    try {
      await this.write(entries.map((entry) => entry.item));
    } catch (err) {
      if (entries.length === 1) {
        entries[0]?.reject(err);
        return;
      }
      for (const entry of entries) await this.commit([entry]);
      return;
    }
    for (const entry of entries) entry.resolve();
  }
}
