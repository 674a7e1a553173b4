import {
  assertTopicFilter,
  type BusHandler,
  type BusMessage,
  type BusSubscription,
  InMemoryTopicBus,
  type SubscribeOptions,
  topicMatches,
  type TopicBus,
} from '#broker/bus';
import { createHash, randomInt } from 'node:crypto';
import { type Msg, type Subscription } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { decodeEnvelope, type Envelope, encodeEnvelope, encodeMeta } from './bus-envelope.js';
import { type ClusterNode } from './cluster-node.js';
import { filterToSubjects, MAX_SUBJECT_BYTES, subjectToTopic, topicToSubject } from './subjects.js';

export interface NatsTopicBusOptions {
  readonly logger: Logger;
  readonly onHandlerError?: (error: unknown, message: BusMessage) => void;
}

/** The local subscriptions of one filter, and the NATS subscriptions that bring other nodes' messages to them. */
interface RemoteFilter {
  readonly handlers: Set<Entry>;
  readonly subscriptions: Subscription[];
}

interface Entry {
  readonly handler: BusHandler;
}

/** A filter attracted for 'node'-reach subscriptions, and its NATS subscriptions. */
interface Attracted {
  count: number;
  readonly subscriptions: Subscription[];
}

/** A queue of `share` on this node: its handlers take turns at what NATS gives this node. */
interface Shared {
  readonly handlers: BusHandler[];
  cursor: number;
  readonly subscriptions: Subscription[];
}

/** Per publishing process, the sequence numbers seen lately: an attracted message matching two filters comes twice. */
interface Recent {
  readonly seen: Set<number>;
  readonly order: number[];
}

/** NATS writes the copies of one message for one connection back to back; a short window catches them. */
const RECENT_WINDOW = 1024;

/** Publishers whose recent sequence numbers are kept (the oldest forgotten past it). */
const MAX_PUBLISHERS = 256;
/** Encoded publisher metadata and topic subjects kept for reuse (the maps are cleared when full). */
const MAX_CACHED = 1024;

/** Malformed messages on our subjects are logged at most this often (they are counted in between). */
const DROP_LOG_INTERVAL_MS = 10_000;

/**
 * The TopicBus of a cluster node. Local delivery is the in-memory bus, synchronous and in process; each
 * message also goes to NATS on the subject its topic maps to (subjects.ts), and NATS hands it only to the
 * nodes subscribed to a matching subject. A node subscribes once per distinct local filter (reference
 * counted by its local subscriptions) and delivers what arrives there to that filter's subscriptions only,
 * so a message matching two local filters reaches each once, as on one node. The connection is opened
 * with no-echo, so a node never gets its own messages back.
 *
 * A 'node'-reach subscription (a bridge routing by its own subscriptions) gets no NATS subscription
 * of its own: its owner attracts the filters it wants, and what they bring is delivered to the 'node'
 * subscriptions once per message (the publisher's boot id and sequence number tell the copies apart).
 *
 * Topics too long for a subject travel on one overflow subject every node listens to, and are matched
 * against the local trie on arrival. While NATS is unreachable, messages are delivered locally only
 * (QoS 0: what would be in flight is lost, never queued without bound).
 */
export class NatsTopicBus implements TopicBus {
  private readonly local: InMemoryTopicBus;
  /** The 'node'-reach subscriptions again, for what attracted filters bring from other nodes. */
  private readonly nodeReach: InMemoryTopicBus;
  private readonly filters = new Map<string, RemoteFilter>();
  private readonly attracted = new Map<string, Attracted>();
  private readonly recent = new Map<string, Recent>();
  private readonly shares = new Map<string, Shared>();
  /** This process's messages are told apart from an earlier process's under the same node id. */
  private readonly boot = randomInt(2 ** 32);
  private seq = 0;
  private readonly metas = new Map<string, Buffer>();
  private readonly subjects = new Map<string, string | null>();
  private readonly prefix: string;
  private readonly overflowSubject: string;
  private readonly overflow: Subscription;
  private lastDropLog = -Infinity;
  /** Messages sent to NATS, taken from it (delivered or not), and dropped as malformed; for metrics. */
  readonly stats = { sent: 0, received: 0, dropped: 0 };

  constructor(
    private readonly node: ClusterNode,
    private readonly options: NatsTopicBusOptions,
  ) {
    const errors = options.onHandlerError ? { onHandlerError: options.onHandlerError } : {};
    this.local = new InMemoryTopicBus(errors);
    this.nodeReach = new InMemoryTopicBus(errors);
    this.prefix = node.subject('bus', '');
    this.overflowSubject = node.subject('bus-long');
    node.membership.onChange((change) => {
      if (change.up) return;
      for (const key of this.recent.keys())
        if (key.startsWith(`${change.node}\u0000`)) this.recent.delete(key);
    });
    this.overflow = node.nc.subscribe(this.overflowSubject, {
      callback: (err, msg) => {
        if (err === null) this.receiveOverflow(msg);
      },
    });
  }

  /** Distinct filters this node listens to on NATS, for metrics and tests. */
  get remoteFilterCount(): number {
    return this.filters.size;
  }

  publish(message: BusMessage): number {
    const delivered = this.local.publish(message);
    if (this.node.isConnected) this.forward(message);
    return delivered;
  }

  subscribe(filter: string, handler: BusHandler, options: SubscribeOptions = {}): BusSubscription {
    assertTopicFilter(filter);
    const local = this.local.subscribe(filter, handler);
    if (options.reach === 'node') {
      const attractedHere = this.nodeReach.subscribe(filter, handler);
      return {
        unsubscribe: () => {
          local.unsubscribe();
          attractedHere.unsubscribe();
        },
      };
    }
    let remote = this.filters.get(filter);
    if (remote === undefined) {
      remote = { handlers: new Set(), subscriptions: [] };
      const target = remote;
      // A filter too long for a subject only matches topics too long for one: those come on bus-long.
      for (const subject of this.subjectsOf(filter)) {
        target.subscriptions.push(
          this.node.nc.subscribe(subject, {
            callback: (err, msg) => {
              if (err === null) this.receive(filter, target, msg);
            },
          }),
        );
      }
      this.filters.set(filter, remote);
    }
    const entry: Entry = { handler };
    remote.handlers.add(entry);
    const owner = remote;
    return {
      unsubscribe: () => {
        local.unsubscribe();
        if (!owner.handlers.delete(entry) || owner.handlers.size > 0) return;
        for (const subscription of owner.subscriptions) subscription.unsubscribe();
        this.filters.delete(filter);
      },
    };
  }

  attract(filter: string): BusSubscription {
    assertTopicFilter(filter);
    let attracted = this.attracted.get(filter);
    if (attracted === undefined) {
      attracted = { count: 0, subscriptions: [] };
      for (const subject of this.subjectsOf(filter)) {
        attracted.subscriptions.push(
          this.node.nc.subscribe(subject, {
            callback: (err, msg) => {
              if (err === null) this.receiveAttracted(msg);
            },
          }),
        );
      }
      this.attracted.set(filter, attracted);
    }
    attracted.count++;
    const owner = attracted;
    let active = true;
    return {
      unsubscribe: () => {
        if (!active) return;
        active = false;
        if (--owner.count > 0) return;
        for (const subscription of owner.subscriptions) subscription.unsubscribe();
        this.attracted.delete(filter);
      },
    };
  }

  /**
   * One NATS queue subscription per queue and filter on this node, on the node's second connection
   * (with echo: NATS may pick this node for its own messages). Long topics come on bus-long, which the
   * queue hears too; its members all have the one filter, so the one picked decides alone. While NATS is
   * unreachable a queue gets nothing, this node's messages included.
   */
  share(queue: string, filter: string, handler: BusHandler): BusSubscription {
    assertTopicFilter(filter);
    const key = `${queue}\u0000${filter}`;
    let shared = this.shares.get(key);
    if (shared === undefined) {
      const target: Shared = { handlers: [], cursor: 0, subscriptions: [] };
      const name = `q_${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`;
      for (const subject of [...this.subjectsOf(filter), this.overflowSubject]) {
        target.subscriptions.push(
          this.node.queues.subscribe(subject, {
            queue: name,
            callback: (err, msg) => {
              if (err === null) this.receiveShared(filter, target, msg);
            },
          }),
        );
      }
      this.shares.set(key, (shared = target));
    }
    const owner = shared;
    const member: BusHandler = (message) => handler(message);
    owner.handlers.push(member);
    return {
      unsubscribe: () => {
        const at = owner.handlers.indexOf(member);
        if (at === -1) return;
        owner.handlers.splice(at, 1);
        if (owner.handlers.length > 0) return;
        for (const subscription of owner.subscriptions) subscription.unsubscribe();
        this.shares.delete(key);
      },
    };
  }

  /** Stops listening on NATS; local subscriptions keep working. */
  close(): void {
    this.overflow.unsubscribe();
    for (const remote of [...this.filters.values(), ...this.attracted.values(), ...this.shares.values()]) {
      for (const subscription of remote.subscriptions) subscription.unsubscribe();
    }
    this.filters.clear();
    this.attracted.clear();
    this.shares.clear();
  }

  private forward(message: BusMessage): void {
    try {
      const subject = this.subjectOf(message.topic);
      const data = encodeEnvelope(
        this.boot,
        ++this.seq,
        this.metaOf(message),
        subject === null ? message.topic : '',
        message.payload,
        message.qos,
        message.stored === true,
      );
      this.stats.sent++;
      this.node.nc.publish(subject ?? this.overflowSubject, data);
    } catch (err) {
      // Closed, or a payload past the server's limit: local delivery stands, the other nodes miss it.
      this.drop(`not sent to other nodes: ${(err as Error).message}`, message.topic);
    }
  }

  /** The subjects a filter listens on, without those too long to be a subject. */
  private subjectsOf(filter: string): string[] {
    return filterToSubjects(filter)
      .map((subject) => this.prefix + subject)
      .filter((subject) => Buffer.byteLength(subject) <= MAX_SUBJECT_BYTES);
  }

  /** The subject of a topic, or null when it is too long for one (the message goes on bus-long). */
  private subjectOf(topic: string): string | null {
    let subject = this.subjects.get(topic);
    if (subject !== undefined) return subject;
    const full = this.prefix + topicToSubject(topic);
    subject = Buffer.byteLength(full) <= MAX_SUBJECT_BYTES ? full : null;
    if (this.subjects.size >= MAX_CACHED) this.subjects.clear();
    this.subjects.set(topic, subject);
    return subject;
  }

  private metaOf(message: BusMessage): Buffer {
    const principal = message.principal ?? null;
    const key = `${message.origin}\u0000${message.contentType ?? '\u0001'}\u0000${principal ?? '\u0001'}`;
    let meta = this.metas.get(key);
    if (meta === undefined) {
      meta = encodeMeta({
        origin: message.origin,
        node: this.node.nodeId,
        contentType: message.contentType,
        principal,
      });
      if (this.metas.size >= MAX_CACHED) this.metas.clear();
      this.metas.set(key, meta);
    }
    return meta;
  }

  private receive(filter: string, remote: RemoteFilter, msg: Msg): void {
    this.stats.received++;
    const topic = subjectToTopic(msg.subject.slice(this.prefix.length));
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    // NATS wildcards also match '$'-topics, which MQTT keeps out of leading wildcards.
    if (!topicMatches(filter, topic)) return;
    const envelope = this.open(msg);
    if (envelope === null) return;
    const message = this.messageOf(topic, envelope);
    for (const entry of remote.handlers) this.invoke(entry.handler, message);
  }

  private receiveShared(filter: string, shared: Shared, msg: Msg): void {
    this.stats.received++;
    const envelope = this.open(msg);
    if (envelope === null) return;
    const topic =
      msg.subject === this.overflowSubject
        ? envelope.topic
        : subjectToTopic(msg.subject.slice(this.prefix.length));
    if (topic === null || topic === '') return this.drop('subject is not a topic', msg.subject);
    // NATS wildcards also match '$'-topics; and a long topic on bus-long may match another filter.
    if (!topicMatches(filter, topic)) return;
    const handler = shared.handlers[shared.cursor++ % shared.handlers.length];
    if (handler === undefined) return;
    this.invoke(handler, this.messageOf(topic, envelope));
  }

  /** A handler's failure, thrown or rejected, is reported and stops nothing else. */
  private invoke(handler: BusHandler, message: BusMessage): void {
    try {
      const result: unknown = handler(message);
      if (result instanceof Promise)
        result.catch((error: unknown) => this.options.onHandlerError?.(error, message));
    } catch (error) {
      this.options.onHandlerError?.(error, message);
    }
  }

  private receiveAttracted(msg: Msg): void {
    this.stats.received++;
    const envelope = this.open(msg);
    if (envelope === null || this.isRepeat(envelope)) return;
    const topic = subjectToTopic(msg.subject.slice(this.prefix.length));
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    try {
      this.nodeReach.publish(this.messageOf(topic, envelope));
    } catch (err) {
      this.drop(`attracted message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  /** Whether this copy of a message already came through another attracted filter. */
  private isRepeat(envelope: Envelope): boolean {
    const publisher = `${envelope.node}\u0000${envelope.boot}`;
    let recent = this.recent.get(publisher);
    if (recent === undefined) {
      if (this.recent.size >= MAX_PUBLISHERS) this.recent.delete(this.recent.keys().next().value as string);
      this.recent.set(publisher, (recent = { seen: new Set(), order: [] }));
    }
    if (recent.seen.has(envelope.seq)) return true;
    recent.seen.add(envelope.seq);
    recent.order.push(envelope.seq);
    if (recent.order.length > RECENT_WINDOW) recent.seen.delete(recent.order.shift() as number);
    return false;
  }

  private receiveOverflow(msg: Msg): void {
    this.stats.received++;
    const envelope = this.open(msg);
    if (envelope === null) return;
    if (envelope.topic === '') return this.drop('long-topic message without its topic', msg.subject);
    try {
      this.local.publish(this.messageOf(envelope.topic, envelope));
    } catch (err) {
      this.drop(`long-topic message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  private open(msg: Msg): Envelope | null {
    const envelope = decodeEnvelope(msg.data);
    if (envelope === null) this.drop('not a bus envelope', msg.subject);
    return envelope;
  }

  private messageOf(topic: string, envelope: Envelope): BusMessage {
    return {
      topic,
      payload: envelope.payload,
      origin: envelope.origin,
      node: envelope.node,
      principal: envelope.principal,
      ...(envelope.contentType === undefined ? {} : { contentType: envelope.contentType }),
      ...(envelope.qos === undefined ? {} : { qos: envelope.qos }),
      ...(envelope.stored ? { stored: true } : {}),
    };
  }

  private drop(why: string, subject: string): void {
    this.stats.dropped++;
    const now = performance.now();
    if (now - this.lastDropLog < DROP_LOG_INTERVAL_MS) return;
    this.lastDropLog = now;
    this.options.logger.warn({ why, subject, dropped: this.stats.dropped }, 'bus message from NATS dropped');
  }
}
