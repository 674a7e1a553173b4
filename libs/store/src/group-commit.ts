interface Entry<Item> {
  readonly item: Item;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit: items added in the same tick are written together, and each caller's promise settles
 * only once the write that carries its item has committed. Nothing is acknowledged before it is
 * stored, yet a burst of small writes (a thousand charge points' heartbeats) costs one commit instead
 * of one each. A batch that fails is retried item by item, so a bad item fails only its own caller.
 */
export class GroupCommit<Item> {
  private pending: Entry<Item>[] = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly write: (items: readonly Item[]) => Promise<void>,
    private readonly maxBatch: number,
  ) {}

  add(item: Item): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Resolves once everything added so far has been written (or has failed): call before closing. */
  async drain(): Promise<void> {
    if (this.scheduled) this.flush();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private flush(): void {
    if (!this.scheduled) return;
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i += this.maxBatch) {
      const commit = this.commit(batch.slice(i, i + this.maxBatch));
      this.inFlight.add(commit);
      void commit.finally(() => this.inFlight.delete(commit));
    }
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
