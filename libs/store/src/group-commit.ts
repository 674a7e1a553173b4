import { CommitNotDurableError } from './errors.js';

interface Entry<Item> {
  readonly item: Item;
  readonly weight: number;
  readonly resolve: (loopMs: number) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: items are written in batches, and each caller's promise settles only once the write
 * that carries its item has committed. Nothing is acknowledged before it is stored, yet a burst of
 * small writes (a thousand charge points' heartbeats) costs one commit instead of one each. One write
 * is in flight at a time: the items of a tick are written at its end, and whatever arrives while a
 * write is under way (over any number of ticks: PostgreSQL answers over the network) waits for it
 * and goes in the next batch, so a slow commit makes batches larger, not more numerous. A batch that
 * fails is retried item by item, so a bad item fails only its own caller; one that was committed but
 * may not be on disk (CommitNotDurableError) fails every caller.
 */
export class GroupCommit<Item> {
  private readonly pending: Entry<Item>[] = [];
  private scheduled = false;
  private writing: Promise<void> | null = null;

  constructor(
    /** Writes a batch and resolves with the event loop's time it took (BatchInsert.run), or 0. */
    private readonly write: (items: readonly Item[]) => Promise<number>,
    private readonly maxBatch: number,
  ) {}

  /**
   * Resolves once the item is committed, with its share of the loop time its batch's write reported,
   * in proportion to `weight` (its rows, say): what the caller may charge to whoever sent the item.
   */
  add(item: Item, weight = 1): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, weight, resolve, reject });
      if (!this.scheduled && this.writing === null) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Resolves once everything added so far has been written (or has failed): call before closing. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.writing === null) this.flush();
      if (this.writing === null) return;
      await this.writing;
    }
  }

  /** Starts writing the next batch, unless a write is in flight (its end starts the next one). */
  private flush(): void {
    this.scheduled = false;
    if (this.writing !== null || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.maxBatch);
    this.writing = this.commit(batch).then(() => {
      this.writing = null;
      this.flush();
    });
  }

  private async commit(entries: readonly Entry<Item>[]): Promise<void> {
    let loopMs: number;
    try {
      loopMs = await this.write(entries.map((entry) => entry.item));
    } catch (err) {
      // Committed but maybe not on disk: retried, the batch would be stored twice.
      if (entries.length === 1 || err instanceof CommitNotDurableError) {
        for (const entry of entries) entry.reject(err);
        return;
      }
      for (const entry of entries) await this.commit([entry]);
      return;
    }
    let weights = 0;
    for (const entry of entries) weights += entry.weight;
    for (const entry of entries) entry.resolve(weights > 0 ? (loopMs * entry.weight) / weights : 0);
  }
}
