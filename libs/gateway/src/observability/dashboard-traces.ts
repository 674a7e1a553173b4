/**
 * One packet, or what became of it, as a module writes it into a trace. Never a payload's contents (a
 * payload may be a secret): its size only.
 */
export interface TraceRecord {
  /** What happened, in the module's words ('connect', 'publish-in', 'delivered'). */
  readonly event: string;
  /** The client it concerns (for a delivery: the receiver), or null. */
  readonly client: string | null;
  /** The topic, or the filter of a subscription; null where there is none. */
  readonly topic: string | null;
  readonly qos: number | null;
  readonly packetId: number | null;
  /** The payload's size in bytes, or null where there is none. */
  readonly bytes: number | null;
  /** What came of it ('accepted', 'refused', 'sent', 'queued', 'dropped', 'resent', 'expired'). */
  readonly outcome: string;
  /** Why, or what else there is to say (a reason code and its name), or null. */
  readonly reason: string | null;
}

/** A record as the admin API answers it: when (ISO time) and on which cluster node (null on one broker). */
export interface TraceEvent extends TraceRecord {
  readonly time: string;
  readonly node: string | null;
}

/** Where a module writes the records of one trace: cheap, synchronous, never throws. */
export interface TraceSink {
  write(record: TraceRecord): void;
}

/**
 * A kind of trace a module offers (an MQTT client by its id; the messages on a topic filter): what it
 * follows, by which key. It is asked only for a key of 1 to LOOKUP_KEY_MAX_LENGTH characters with no
 * control character (the admin API refuses others with 400).
 */
export interface DashboardTrace {
  /** Unique across modules: what a trace is started with (a-z, 0-9, '.' and '-', up to 64). */
  readonly id: string;
  /** What it follows ('MQTT client'). */
  readonly title: string;
  /** What the key is ('Client id'). */
  readonly keyLabel: string;
  /** Why `key` cannot be followed ('not a valid topic filter: ...'), or null when it can. */
  invalid(key: string): string | null;
  /** Writes what `key` selects into `sink` until the function it returns is called. */
  follow(key: string, sink: TraceSink): () => void;
}

/** A kind of trace as GET /admin/v1/traces/kinds lists it. */
export interface TraceKindInfo {
  readonly id: string;
  readonly title: string;
  readonly keyLabel: string;
}

/** What a trace kind's id may be: the admin API's and the page's. */
const TRACE_ID = /^[a-z0-9][a-z0-9.-]{0,63}$/;

/** Where modules add the kinds of trace they offer; the admin API's /traces routes start them. */
export class DashboardTraces {
  private readonly kinds = new Map<string, DashboardTrace>();

  /** Adds `kind`; one with its id already there is refused (two modules would answer one trace). */
  add(kind: DashboardTrace): void {
    if (!TRACE_ID.test(kind.id)) {
      throw new Error(`a dashboard trace's id must be a-z, 0-9, '.' and '-' (up to 64): ${kind.id}`);
    }
    if (this.kinds.has(kind.id)) throw new Error(`a dashboard trace ${kind.id} is already there`);
    this.kinds.set(kind.id, kind);
  }

  /** The kind with that id, or undefined. */
  get(id: string): DashboardTrace | undefined {
    return this.kinds.get(id);
  }

  /** Every kind, in the order they were added. */
  list(): TraceKindInfo[] {
    return [...this.kinds.values()].map(({ id, title, keyLabel }) => ({ id, title, keyLabel }));
  }
}
