/** The start of a `next` message as graphql-ws writes it: `{"id":<string>,"type":"next",...`. */
const NEXT_PREFIX = /^\{"id":("(?:[^"\\]|\\.)*"),"type":"next"/;

/**
 * The ids of one connection's subscriptions, so its sends can tell a subscription's event (which a
 * client that stopped reading can do without: Connection.sendEvent) from a query's one result (an
 * answer, never dropped). graphql-ws writes both as `next`; only the message's start is read, never
 * the payload.
 */
export class StreamEvents {
  private readonly ids = new Set<string>();

  started(id: string): void {
    this.ids.add(id);
  }

  ended(id: string): void {
    this.ids.delete(id);
  }

  /** Whether `text` is a `next` of one of the subscriptions. */
  isEvent(text: string): boolean {
    if (this.ids.size === 0) return false;
    const start = NEXT_PREFIX.exec(text);
    if (start === null) return false;
    const quoted = start[1] as string;
    const id = quoted.includes('\\') ? (JSON.parse(quoted) as string) : quoted.slice(1, -1);
    return this.ids.has(id);
  }
}
