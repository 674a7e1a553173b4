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
import { type Msg, type Subscription } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { BusCodec } from './bus-codec.js';
import { decodeEnvelope, type Envelope } from './bus-envelope.js';
import { type ClusterNode } from './cluster-node.js';
import { RecentMessages } from './recent-messages.js';
import { SharedQueues } from './shared-queues.js';

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
  private readonly recent = new RecentMessages();
  private readonly shares: SharedQueues;
  private readonly codec: BusCodec;
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
    this.codec = new BusCodec(node.subject('bus', ''), node.subject('bus-long'), node.nodeId);
    this.shares = new SharedQueues(
      node.queues,
      (filter) => [...this.codec.subjectsOf(filter), this.codec.overflowSubject],
      (filter, msg) => this.receiveShared(filter, msg),
      (handler, message) => this.invoke(handler, message),
    );
    node.membership.onChange((change) => {
      if (!change.up) this.recent.forgetNode(change.node);
    });
    this.overflow = node.nc.subscribe(this.codec.overflowSubject, {
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
      for (const subject of this.codec.subjectsOf(filter)) {
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
      for (const subject of this.codec.subjectsOf(filter)) {
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
    return this.shares.share(queue, filter, handler);
  }

  /** Stops listening on NATS; local subscriptions keep working. */
  close(): void {
    this.overflow.unsubscribe();
    for (const remote of [...this.filters.values(), ...this.attracted.values()]) {
      for (const subscription of remote.subscriptions) subscription.unsubscribe();
    }
    this.filters.clear();
    this.attracted.clear();
    this.shares.close();
  }

  private forward(message: BusMessage): void {
    try {
      const { subject, data } = this.codec.encode(message);
      this.stats.sent++;
      this.node.nc.publish(subject, data);
    } catch (err) {
      // Closed, or a payload past the server's limit: local delivery stands, the other nodes miss it.
      this.drop(`not sent to other nodes: ${(err as Error).message}`, message.topic);
    }
  }

  private receive(filter: string, remote: RemoteFilter, msg: Msg): void {
    this.stats.received++;
    const topic = this.codec.topicOf(msg.subject);
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    // NATS wildcards also match '$'-topics, which MQTT keeps out of leading wildcards.
    if (!topicMatches(filter, topic)) return;
    const envelope = this.open(msg);
    if (envelope === null) return;
    const message = this.codec.messageOf(topic, envelope);
    for (const entry of remote.handlers) this.invoke(entry.handler, message);
  }

  private receiveShared(filter: string, msg: Msg): BusMessage | null {
    this.stats.received++;
    const envelope = this.open(msg);
    if (envelope === null) return null;
    const topic =
      msg.subject === this.codec.overflowSubject ? envelope.topic : this.codec.topicOf(msg.subject);
    if (topic === null || topic === '') {
      this.drop('subject is not a topic', msg.subject);
      return null;
    }
    // NATS wildcards also match '$'-topics; and a long topic on bus-long may match another filter.
    if (!topicMatches(filter, topic)) return null;
    return this.codec.messageOf(topic, envelope);
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
    if (envelope === null || this.recent.isRepeat(envelope)) return;
    const topic = this.codec.topicOf(msg.subject);
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    try {
      this.nodeReach.publish(this.codec.messageOf(topic, envelope));
    } catch (err) {
      this.drop(`attracted message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  private receiveOverflow(msg: Msg): void {
    this.stats.received++;
    const envelope = this.open(msg);
    if (envelope === null) return;
    if (envelope.topic === '') return this.drop('long-topic message without its topic', msg.subject);
    try {
      this.local.publish(this.codec.messageOf(envelope.topic, envelope));
    } catch (err) {
      this.drop(`long-topic message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  private open(msg: Msg): Envelope | null {
    const envelope = decodeEnvelope(msg.data);
    if (envelope === null) this.drop('not a bus envelope', msg.subject);
    return envelope;
  }

  private drop(why: string, subject: string): void {
    this.stats.dropped++;
    const now = performance.now();
    if (now - this.lastDropLog < DROP_LOG_INTERVAL_MS) return;
    this.lastDropLog = now;
    this.options.logger.warn({ why, subject, dropped: this.stats.dropped }, 'bus message from NATS dropped');
  }
}
