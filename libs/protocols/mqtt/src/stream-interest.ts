import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { SubscriptionStore } from './subscription-store.js';
import { parseFilter } from './topic-filter.js';

/**
 * Which topics a consumer of the MQTT message stream reads, anywhere in the cluster: one KV entry per
 * consumer (its name, its MQTT filter), written before the consumer is made and deleted after it, and
 * watched by every node into a trie. A QoS 1/2 publish is stored in the stream before its PUBACK only
 * when a consumer wants its topic; otherwise (subscribers with clean sessions only, or none) it is
 * acknowledged at once, as on one node, and its bus message says so, so that a consumer made meanwhile,
 * whose node has not seen this entry yet, still gets it through the bus.
 */
export class StreamInterest {
  private kv: KV | null = null;
  private watch: BucketWatch | null = null;
  private readonly filters = new SubscriptionStore();
  private readonly byConsumer = new Map<string, string>();
  /** The revision of each consumer's entry this node last saw or wrote. */
  private readonly revisions = new Map<string, number>();
  /**
   * Whether the trie holds the bucket as it is: not before a watch has replayed it, nor while NATS is
   * away (entries written meanwhile are missed until the watch starts again).
   */
  private current = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const kv = await this.node.bucket('mqtt-stream-filters', { history: 1 });
    this.kv = kv;
    await this.markIfEmpty();
    this.watch = await watchBucket(kv, (entry) => this.apply(entry), {
      log: this.log,
      what: 'mqtt stream filters',
      retryMs: 1000,
      loadTimeoutMs: 5000,
    });
    this.node.onConnection((connected) => {
      this.current = false;
      if (!connected) return;
      this.watch?.restart();
      void this.markIfEmpty();
    });
    await this.watch.loaded;
  }

  /** An empty bucket has nothing to replay: the empty trie is its current view. */
  private async markIfEmpty(): Promise<void> {
    if ((await this.kv?.status().catch(() => null))?.values === 0) this.current = true;
  }

  stop(): void {
    this.watch?.stop();
  }

  /** Whether a consumer reads `topic` (while the trie may miss entries: yes, to be safe). */
  wants(topic: string): boolean {
    return !this.current || this.filters.match(topic, always).length > 0;
  }

  /** Before the consumer is made: from now on, messages on its topics are stored. */
  async add(consumer: string, filter: string): Promise<void> {
    if (this.kv === null) throw new Error('the stream filter bucket is not open');
    this.set(consumer, filter);
    this.revisions.set(consumer, await this.kv.put(consumer, filter));
  }

  /**
   * After the consumer was deleted: its entry goes, unless it was written again since (the same
   * subscription made again, here or on another node), which the revision tells.
   */
  remove(consumer: string): void {
    const revision = this.revisions.get(consumer);
    if (revision === undefined) return;
    this.kv?.delete(consumer, { previousSeq: revision }).then(
      () => {
        if (this.revisions.get(consumer) !== revision) return;
        this.revisions.delete(consumer);
        this.set(consumer, null);
      },
      () => undefined,
    );
  }

  private apply(entry: KvWatchEntry): void {
    // The replay of the bucket ends with the entry that has nothing pending behind it.
    if (entry.delta === 0) this.current = true;
    this.revisions.set(entry.key, entry.revision);
    if (entry.operation !== 'PUT') return this.set(entry.key, null);
    const filter = Buffer.from(entry.value).toString('utf8');
    try {
      if (parseFilter(filter).group !== null) throw new Error('a shared filter');
    } catch {
      this.log.warn({ key: entry.key }, 'mqtt: a stream filter entry that is not a filter ignored');
      return;
    }
    this.set(entry.key, filter);
  }

  private set(consumer: string, filter: string | null): void {
    const previous = this.byConsumer.get(consumer);
    if (previous === filter) return;
    if (previous !== undefined) this.filters.remove(consumer, subscriptionOf(previous));
    if (filter === null) this.byConsumer.delete(consumer);
    else {
      this.byConsumer.set(consumer, filter);
      this.filters.add(consumer, subscriptionOf(filter));
    }
  }
}

const always = (): boolean => true;

/** The trie keeps subscriptions: a consumer's filter as one. */
function subscriptionOf(filter: string) {
  return {
    raw: filter,
    filter,
    group: null,
    qos: 1 as const,
    noLocal: false,
    retainAsPublished: false,
    retainHandling: 0,
    subscriptionId: null,
  };
}
