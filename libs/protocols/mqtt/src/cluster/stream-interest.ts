import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { SubscriptionStore } from '../subscription-store.js';
import { parseFilter } from '../topic-filter.js';

/**
 * Which topics a consumer of the MQTT message stream reads, anywhere in the cluster: one KV entry per
 * consumer (its name, its MQTT filter), written before the consumer is made and deleted after it, and
 * watched by every node into a trie. A QoS 1/2 publish is stored in the stream before its PUBACK only
 * when a consumer wants its topic; otherwise (subscribers with clean sessions only, or none) it is
 * acknowledged at once, as on one node, and its bus message says so. A new consumer's SUBACK waits until
 * every live node's trie holds its entry (`everywhere`), so no node acknowledges unstored what it reads.
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
  /** The highest revision of the bucket this node's trie holds. */
  private seenRevision = 0;
  private readonly waiting = new Set<{ readonly revision: number; readonly resolve: () => void }>();

  constructor(
    private readonly node: ClusterNode,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    const kv = await this.node.bucket('mqtt-stream-filters', { history: 1 });
    this.kv = kv;
    await this.markIfEmpty();
    this.node.serve(SEEN, (body) => this.seen(Number((body as { revision?: unknown } | null)?.revision)));
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
    for (const waiter of this.waiting) waiter.resolve();
  }

  /**
   * Resolves once every live node's trie holds the bucket up to `revision`, or once those that have not
   * answered within SEEN_WAIT_MS are left out (a node away from NATS stores everything meanwhile).
   */
  async everywhere(revision: number): Promise<void> {
    await this.node.scatter(SEEN, { revision }, SEEN_WAIT_MS + 500);
  }

  /** On every node: answers once its trie holds the bucket up to `revision` (false after SEEN_WAIT_MS). */
  private seen(revision: number): boolean | Promise<boolean> {
    if (!Number.isSafeInteger(revision) || revision <= this.seenRevision) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(waiter);
        resolve(false);
      }, SEEN_WAIT_MS);
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          this.waiting.delete(waiter);
          resolve(true);
        },
      };
      this.waiting.add(waiter);
    });
  }

  /** Whether a consumer reads `topic` (while the trie may miss entries: yes, to be safe). */
  wants(topic: string): boolean {
    return !this.current || this.filters.match(topic, always).length > 0;
  }

  /** Before the consumer is made: from now on, messages on its topics are stored. Returns the entry's revision. */
  async add(consumer: string, filter: string): Promise<number> {
    if (this.kv === null) throw new Error('the stream filter bucket is not open');
    this.set(consumer, filter);
    const revision = await this.kv.put(consumer, filter);
    this.revisions.set(consumer, revision);
    return revision;
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
    if (entry.revision > this.seenRevision) {
      this.seenRevision = entry.revision;
      for (const waiter of this.waiting) if (waiter.revision <= entry.revision) waiter.resolve();
    }
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

/** The node-addressed request that asks a node whether its trie holds the bucket up to a revision. */
const SEEN = 'mqtt.stream-filters-seen';
/** How long a node waits for its watch to reach the revision asked about. */
const SEEN_WAIT_MS = 2000;

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
