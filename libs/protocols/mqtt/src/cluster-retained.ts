import { type ClusterNode } from '#broker/cluster';
import { type KV, type KvWatchEntry } from '@nats-io/kv';
import { type QoS } from 'mqtt-packet';
import { type Logger } from 'pino';
import { type MqttBroker } from './broker.js';
import { type MqttMessage, type PassThroughProperties } from './message.js';

/** KV keys are subject tokens: a topic whose base64url is longer stays on its node (and is logged). */
const MAX_KEY_LENGTH = 2048;

/** What a retained message's value holds besides its payload, as JSON. */
interface Meta {
  readonly topic: string;
  readonly qos: QoS;
  readonly publisherId: string | null;
  readonly expiresAt: number | null;
  readonly properties: Omit<PassThroughProperties, 'correlationData'> & { correlationData?: string };
}

/** A value: 4 bytes of JSON length, the JSON, then the payload as it came (no base64 on the payload). */
export function encodeRetained(message: MqttMessage): Uint8Array {
  const { correlationData, ...properties } = message.properties;
  const meta: Meta = {
    topic: message.topic,
    qos: message.qos,
    publisherId: message.publisherId,
    expiresAt: message.expiresAt,
    properties:
      correlationData === undefined
        ? properties
        : { ...properties, correlationData: correlationData.toString('base64') },
  };
  const json = Buffer.from(JSON.stringify(meta), 'utf8');
  const value = Buffer.allocUnsafe(4 + json.byteLength + message.payload.byteLength);
  value.writeUInt32BE(json.byteLength, 0);
  json.copy(value, 4);
  message.payload.copy(value, 4 + json.byteLength);
  return value;
}

/** The message a value holds, or null when it is not one of ours. */
export function decodeRetained(value: Uint8Array): MqttMessage | null {
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (bytes.byteLength < 4) return null;
  const length = bytes.readUInt32BE(0);
  if (4 + length > bytes.byteLength) return null;
  let meta: Meta;
  try {
    meta = JSON.parse(bytes.subarray(4, 4 + length).toString('utf8')) as Meta;
  } catch {
    return null;
  }
  if (typeof meta?.topic !== 'string' || ![0, 1, 2].includes(meta.qos)) return null;
  const { correlationData, ...properties } = meta.properties ?? {};
  return {
    topic: meta.topic,
    // A copy: the KV entry's buffer is not ours to keep.
    payload: Buffer.from(bytes.subarray(4 + length)),
    qos: meta.qos,
    retain: true,
    publisherId: typeof meta.publisherId === 'string' ? meta.publisherId : null,
    expiresAt: typeof meta.expiresAt === 'number' ? meta.expiresAt : null,
    properties:
      typeof correlationData === 'string'
        ? { ...properties, correlationData: Buffer.from(correlationData, 'base64') }
        : properties,
  };
}

/**
 * Retained messages shared by the nodes: each one a KV entry keyed by its topic, every node's in-memory
 * store fed by a watch of the bucket (the store stays the cache that SUBSCRIBE reads). A retained
 * publish is stored here at once, then written to the bucket; every entry of the watch is applied in
 * the bucket's order, this node's own included, so after concurrent writes to one topic every node
 * holds the one the bucket kept. An empty payload deletes the entry.
 */
export class ClusterRetained {
  private kv: KV | null = null;
  private stopped = false;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {}

  /** Resolves once the bucket's current entries are in the store (at most 5 s on a huge bucket). */
  async start(): Promise<void> {
    const kv = await this.node.bucket('mqtt-retained', { history: 1 });
    this.kv = kv;
    this.broker.hooks.retained = (message) => this.write(message);
    const stored = (await kv.status()).values;
    let loaded: () => void = () => undefined;
    const replayed = new Promise<void>((resolve) => (loaded = resolve));
    await this.watch(kv, loaded);
    if (stored > 0) {
      await Promise.race([replayed, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    }
  }

  stop(): void {
    this.stopped = true;
    this.broker.hooks.retained = undefined;
  }

  private write(message: MqttMessage): void {
    const kv = this.kv;
    // $SYS holds each node's own statistics.
    if (kv === null || message.topic.startsWith('$SYS/')) return;
    const key = Buffer.from(message.topic, 'utf8').toString('base64url');
    if (key.length > MAX_KEY_LENGTH) {
      this.log.debug(
        { topic: message.topic.slice(0, 64) },
        'mqtt: retained topic too long to share, kept on this node',
      );
      return;
    }
    const done = message.payload.byteLength === 0 ? kv.delete(key) : kv.put(key, encodeRetained(message));
    done.catch((err: unknown) =>
      this.log.warn(
        { err: (err as Error).message, topic: message.topic },
        'mqtt: retained message not shared with the cluster',
      ),
    );
  }

  private async watch(kv: KV, loaded: () => void = () => undefined): Promise<void> {
    const watcher = await kv.watch();
    void (async () => {
      for await (const entry of watcher) {
        this.apply(entry);
        // The replay of what the bucket held ends with the entry that has nothing pending behind it.
        if (entry.delta === 0) loaded();
      }
    })().then(
      () => this.rewatch(kv),
      (err: unknown) => {
        this.log.warn({ err: (err as Error).message }, 'mqtt: retained watch failed');
        this.rewatch(kv);
      },
    );
  }

  private rewatch(kv: KV): void {
    if (this.stopped) return;
    setTimeout(() => void this.watch(kv).catch(() => this.rewatch(kv)), 1000).unref();
  }

  private apply(entry: KvWatchEntry): void {
    if (entry.operation !== 'PUT') {
      const topic = Buffer.from(entry.key, 'base64url').toString('utf8');
      const held = this.broker.retained.get(topic);
      if (held !== undefined) this.broker.retained.store({ ...held, payload: Buffer.alloc(0) });
      return;
    }
    const message = decodeRetained(entry.value);
    if (message === null) {
      this.log.warn({ key: entry.key }, 'mqtt: retained entry that is not a message ignored');
      return;
    }
    if (!this.broker.retained.store(message)) {
      this.broker.hooks.dropped?.('retained store full', message.publisherId, message.topic);
    }
  }
}
