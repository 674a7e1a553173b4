import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { type MqttMessage } from '../message.js';
import { LookupCap } from './lookup-cap.js';
import { decodeMessage, encodeMessage } from './message-codec.js';

/** KV keys are subject tokens: a topic whose base64url is longer stays on its node (and is logged). */
const MAX_KEY_LENGTH = 2048;

const BUCKET = 'mqtt-retained';

/** How many clears of topics this node holds nothing for may ask the bucket at once. */
const MAX_CLEAR_LOOKUPS = 64;

/**
 * Retained messages shared by the nodes: each one a KV entry keyed by its topic, every node's in-memory
 * store fed by a watch of the bucket (the store stays the cache that SUBSCRIBE reads). A retained
 * publish is stored here at once, then written to the bucket, and a client's QoS 1/2 one acknowledged
 * only once the bucket holds it: a change acknowledged while NATS was out of reach would be undone by
 * the bucket's older entry when the watch starts again. Every entry of the watch is applied in
 * the bucket's order, this node's own included, so after concurrent writes to one topic every node
 * holds the one the bucket kept. An empty payload deletes the entry, also one the watch has not brought
 * to this node yet.
 */
export class ClusterRetained {
  private kv: KV | null = null;
  private jsm: JetStreamManager | null = null;
  /** The bucket's stream, as @nats-io/kv names it (ClusterNode.bucket puts the cluster's name first). */
  private readonly stream: string;
  private watch: BucketWatch | null = null;
  private readonly clearLookups = new LookupCap(MAX_CLEAR_LOOKUPS);
  /** Clears that failed in a row: the first is a warning, those after it debug lines. */
  private clearFailures = 0;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {
    this.stream = `KV_${node.name}-${BUCKET}`;
  }

  /** Resolves once the bucket's current entries are in the store (at most 5 s on a huge bucket). */
  async start(): Promise<void> {
    // No byte limit on the bucket: JetStream reserves a stream's limit up front, so a generous one would
    // stop the boot on a server with less storage; the in-memory store keeps its own bounds.
    const kv = await this.node.bucket(BUCKET, { history: 1 });
    this.jsm = await jetstreamManager(this.node.nc);
    this.kv = kv;
    this.broker.hooks.retained = (message, held) => this.write(message, held);
    this.watch = await watchBucket(kv, (entry) => this.apply(entry), {
      log: this.log,
      what: 'mqtt retained',
      retryMs: 1000,
      loadTimeoutMs: 5000,
    });
    this.node.onConnection((connected) => {
      if (connected) this.watch?.restart();
    });
    await this.watch.loaded;
  }

  stop(): void {
    this.watch?.stop();
    this.broker.hooks.retained = undefined;
  }

  /**
   * Settles with null once the bucket holds the change, or with why it does not (never rejects). `held`:
   * whether this node's store held a message on the topic before.
   */
  private async write(message: MqttMessage, held: boolean): Promise<Error | null> {
    const kv = this.kv;
    // $SYS holds each node's own statistics.
    if (kv === null || message.topic.startsWith('$SYS/')) return null;
    const key = Buffer.from(message.topic, 'utf8').toString('base64url');
    if (key.length > MAX_KEY_LENGTH) {
      this.log.debug(
        { topic: message.topic.slice(0, 64) },
        'mqtt: retained topic too long to share, kept on this node',
      );
      return null;
    }
    const clear = message.payload.byteLength === 0;
    try {
      if (!clear) await kv.put(key, encodeMessage(message));
      else if (held) await kv.delete(key);
      else {
        // A topic this node holds nothing for may still be in the bucket: another node's message that the
        // watch has not brought here yet (or that this node's full store refused). Asked first, so that
        // clearing topics nobody retained on leaves no delete marker in the bucket; at most so many at
        // once, as each is a request to JetStream that a client's tiny packets could start.
        const lookup = this.clearLookups.run(() => this.inBucket(key));
        if (lookup === null) {
          // QoS 0: skipped, as nothing was retained here; QoS 1/2: refused rather than acknowledged.
          return message.qos === 0 ? null : new Error('too many retained clears waiting for the cluster');
        }
        if (await lookup) await kv.delete(key);
      }
      if (clear) this.clearFailures = 0;
      return null;
    } catch (err) {
      const fields = { err: (err as Error).message, topic: message.topic };
      // Clears of made-up topics while NATS is away would be a line each.
      if (!clear || ++this.clearFailures === 1) {
        this.log.warn(fields, 'mqtt: retained message not shared with the cluster');
      } else {
        this.log.debug({ ...fields, failures: this.clearFailures }, 'mqtt: retained clear not shared');
      }
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /**
   * Whether the bucket holds a message for `key`, as its stream's leader says: a direct get (the
   * bucket's allow_direct, which kv.get uses) may be answered by a replica that has not got the entry
   * yet when `cluster.replicas` is more than 1.
   */
  private async inBucket(key: string): Promise<boolean> {
    const jsm = this.jsm;
    if (jsm === null) return false;
    const last = await jsm.streams.getMessage(this.stream, {
      last_by_subj: `$KV.${this.node.name}-${BUCKET}.${key}`,
    });
    // A delete or purge marker carries its operation in this header (@nats-io/kv's kvOperationHdr).
    return last !== null && last.header.get('KV-Operation') === '';
  }

  private apply(entry: KvWatchEntry): void {
    if (entry.operation !== 'PUT') {
      const topic = Buffer.from(entry.key, 'base64url').toString('utf8');
      const held = this.broker.retained.get(topic);
      if (held !== undefined)
        this.broker.retained.store({ ...held, payload: Buffer.alloc(0) }, entry.created.getTime());
      return;
    }
    const message = decodeMessage(entry.value);
    if (message === null) {
      this.log.warn({ key: entry.key }, 'mqtt: retained entry that is not a message ignored');
      return;
    }
    // The time the publisher's node put it in the bucket, the same on every node.
    if (!this.broker.retained.store(message, entry.created.getTime())) {
      this.broker.hooks.dropped?.('retained store full', message.publisherId, message.topic);
    }
  }
}
