import { topicMatches } from '#broker/bus';
import { type TraceRecord, type TraceSink } from '#broker/gateway';

interface FilterTap {
  readonly filter: string;
  readonly sink: TraceSink;
}

/**
 * The traces following this broker's packets: by client id, and by topic filter. A packet path asks
 * `active` first, so with no trace running a packet costs one property read; with traces it costs a
 * Map lookup per client id and a match against each (of the few) followed filters.
 */
export class TraceTaps {
  /** True while any trace follows anything. */
  active = false;
  private readonly clients = new Map<string, TraceSink[]>();
  private filters: readonly FilterTap[] = [];

  /** Writes the packets of `clientId` (and where its messages were delivered) into `sink` until called back. */
  followClient(clientId: string, sink: TraceSink): () => void {
    this.clients.set(clientId, [...(this.clients.get(clientId) ?? []), sink]);
    this.active = true;
    return () => {
      const left = (this.clients.get(clientId) ?? []).filter((s) => s !== sink);
      if (left.length === 0) this.clients.delete(clientId);
      else this.clients.set(clientId, left);
      this.settle();
    };
  }

  /** Writes every message in and every delivery on a topic `filter` matches into `sink` until called back. */
  followTopics(filter: string, sink: TraceSink): () => void {
    const tap = { filter, sink };
    this.filters = [...this.filters, tap];
    this.active = true;
    return () => {
      this.filters = this.filters.filter((t) => t !== tap);
      this.settle();
    };
  }

  /** Whether a trace follows `clientId`. */
  followsClient(clientId: string): boolean {
    return this.clients.has(clientId);
  }

  /** A client's own packet (CONNECT, DISCONNECT, SUBSCRIBE, UNSUBSCRIBE): to the traces of its client id. */
  client(record: TraceRecord): void {
    const sinks = record.client === null ? undefined : this.clients.get(record.client);
    if (sinks !== undefined) for (const sink of sinks) sink.write(record);
  }

  /**
   * A message in or delivered: to the traces of its client, of `publisherId` (whose message a delivery
   * carries) and of each filter matching its topic, once to each.
   */
  message(record: TraceRecord, publisherId: string | null): void {
    const sinks = new Set<TraceSink>();
    if (record.client !== null) for (const sink of this.clients.get(record.client) ?? []) sinks.add(sink);
    if (publisherId !== null) for (const sink of this.clients.get(publisherId) ?? []) sinks.add(sink);
    const topic = record.topic;
    if (topic !== null)
      for (const tap of this.filters) if (topicMatches(tap.filter, topic)) sinks.add(tap.sink);
    for (const sink of sinks) sink.write(record);
  }

  private settle(): void {
    this.active = this.clients.size > 0 || this.filters.length > 0;
  }
}
