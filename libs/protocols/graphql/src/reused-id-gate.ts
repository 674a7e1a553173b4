/**
 * graphql-transport-ws lets a client re-use an id once it has completed that operation, and a client
 * may send the `complete` and the new `subscribe` in one write. graphql-ws's `makeServer` then ends the
 * new operation at once: the old operation's handler, still returning, sends `complete` and deletes the
 * id's entry, which by then is the new one's (its own `useServer` does the same). This gate holds such
 * a `subscribe`, and every message behind it, until the old operation's handler has returned.
 */
export class ReusedIdGate {
  /** The handler of each `subscribe` whose operation has not returned yet, by id. */
  private readonly running = new Map<string, Promise<void>>();
  /** Ids of running operations the client has completed. */
  private readonly completing = new Set<string>();
  /** The end of the messages held behind a re-used id, or null when none are held. */
  private held: Promise<void> | null = null;

  constructor(
    /** graphql-ws's handler for one message; its promise for a `subscribe` settles when the operation ends. */
    private readonly handle: (text: string) => Promise<void>,
    private readonly failed: (err: unknown) => void,
  ) {}

  push(text: string, type: string, id: string | undefined): void {
    if (this.held === null) return this.dispatch(text, type, id);
    this.hold(this.held.then(() => this.dispatch(text, type, id)));
  }

  private dispatch(text: string, type: string, id: string | undefined): void {
    if (id === undefined) return void this.handle(text).catch(this.failed);
    if (type === 'complete' && this.running.has(id)) this.completing.add(id);
    if (type !== 'subscribe') return void this.handle(text).catch(this.failed);
    const prior = this.running.get(id);
    // A running id the client did not complete goes through: graphql-ws closes 4409 for it.
    if (prior !== undefined && this.completing.has(id)) {
      return this.hold(prior.then(() => this.dispatch(text, type, id)));
    }
    const run: Promise<void> = this.handle(text)
      .catch(this.failed)
      .finally(() => {
        if (this.running.get(id) !== run) return;
        this.running.delete(id);
        this.completing.delete(id);
      });
    this.running.set(id, run);
  }

  private hold(until: Promise<void>): void {
    this.held = until;
    void until.then(() => {
      if (this.held === until) this.held = null;
    });
  }
}
