import { type BucketWatch, type ClusterNode, watchBucket } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { type MqttMessage } from '../message.js';
import { decodeMessage, encodeMessage } from './message-codec.js';

/** KV keys are subject tokens: a topic whose base64url is longer stays on its node (and is logged). */
const MAX_KEY_LENGTH = 2048;

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
  private watch: BucketWatch | null = null;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {}

  /** Resolves once the bucket's current entries are in the store (at most 5 s on a huge bucket). */
  async start(): Promise<void> {
    // No byte limit on the bucket: JetStream reserves a stream's limit up front, so a generous one would
    // stop the boot on a server with less storage; the in-memory store keeps its own bounds.
    const kv = await this.node.bucket('mqtt-retained', { history: 1 });
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
    try {
      if (message.payload.byteLength > 0) await kv.put(key, encodeMessage(message));
      // A topic this node holds nothing for may still be in the bucket: another node's message that the
      // watch has not brought here yet (or that this node's full store refused). Asked first, so that
      // clearing topics nobody retained on leaves no delete marker in the bucket.
      else if (held || (await kv.get(key))?.operation === 'PUT') await kv.delete(key);
      return null;
    } catch (err) {
      this.log.warn(
        { err: (err as Error).message, topic: message.topic },
        'mqtt: retained message not shared with the cluster',
      );
      return err instanceof Error ? err : new Error(String(err));
    }
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
