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
import { headers, type Msg, type Subscription } from '@nats-io/nats-core';
import { type Logger } from 'pino';
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

/** Per publishing node, the sequence numbers seen lately: an attracted message matching two filters comes twice. */
interface Recent {
  readonly seen: Set<number>;
  readonly order: number[];
}

/** NATS writes the copies of one message for one connection back to back; a short window catches them. */
const RECENT_WINDOW = 1024;

/** Header names: short, as they travel with every message. */
const ORIGIN = 'o';
const CONTENT_TYPE = 'c';
const PRINCIPAL = 'p';
const NODE = 'n';
/** The publishing node's sequence number of the message. */
const SEQ = 's';
/** The topic itself, on the subject for topics too long to be a subject. */
const TOPIC = 't';

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
 * subscriptions once per message (the publisher's sequence number tells the copies apart).
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
  private seq = 0;
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
      for (const subject of filterToSubjects(filter)) {
        target.subscriptions.push(
          this.node.nc.subscribe(this.prefix + subject, {
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
      for (const subject of filterToSubjects(filter)) {
        attracted.subscriptions.push(
          this.node.nc.subscribe(this.prefix + subject, {
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

  /** Stops listening on NATS; local subscriptions keep working. */
  close(): void {
    this.overflow.unsubscribe();
    for (const remote of [...this.filters.values(), ...this.attracted.values()]) {
      for (const subscription of remote.subscriptions) subscription.unsubscribe();
    }
    this.filters.clear();
    this.attracted.clear();
  }

  private forward(message: BusMessage): void {
    const h = headers();
    h.set(ORIGIN, message.origin);
    h.set(NODE, this.node.nodeId);
    h.set(SEQ, String(++this.seq));
    if (message.contentType !== undefined) h.set(CONTENT_TYPE, message.contentType);
    if (message.principal !== undefined && message.principal !== null) h.set(PRINCIPAL, message.principal);
    const subject = topicToSubject(message.topic);
    try {
      this.stats.sent++;
      if (Buffer.byteLength(subject) + this.prefix.length <= MAX_SUBJECT_BYTES) {
        this.node.nc.publish(this.prefix + subject, message.payload, { headers: h });
      } else {
        h.set(TOPIC, message.topic);
        this.node.nc.publish(this.overflowSubject, message.payload, { headers: h });
      }
    } catch (err) {
      // Closed or a payload past the server's limit: local delivery stands, the other nodes miss it.
      this.drop(`not sent to other nodes: ${(err as Error).message}`, message.topic);
    }
  }

  private receive(filter: string, remote: RemoteFilter, msg: Msg): void {
    this.stats.received++;
    const topic = subjectToTopic(msg.subject.slice(this.prefix.length));
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    // NATS wildcards also match '$'-topics, which MQTT keeps out of leading wildcards.
    if (!topicMatches(filter, topic)) return;
    const message = this.decode(topic, msg);
    if (message === null) return;
    for (const entry of remote.handlers) {
      try {
        const result: unknown = entry.handler(message);
        if (result instanceof Promise)
          result.catch((error: unknown) => this.options.onHandlerError?.(error, message));
      } catch (error) {
        this.options.onHandlerError?.(error, message);
      }
    }
  }

  private receiveAttracted(msg: Msg): void {
    this.stats.received++;
    if (this.isRepeat(msg)) return;
    const topic = subjectToTopic(msg.subject.slice(this.prefix.length));
    if (topic === null) return this.drop('subject is not a topic', msg.subject);
    const message = this.decode(topic, msg);
    if (message === null) return;
    try {
      this.nodeReach.publish(message);
    } catch (err) {
      this.drop(`attracted message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  /** Whether this copy of a message already came through another attracted filter. */
  private isRepeat(msg: Msg): boolean {
    const node = msg.headers?.get(NODE) ?? '';
    const seq = Number(msg.headers?.get(SEQ));
    if (node === '' || !Number.isSafeInteger(seq)) return false;
    let recent = this.recent.get(node);
    if (recent === undefined) this.recent.set(node, (recent = { seen: new Set(), order: [] }));
    if (recent.seen.has(seq)) return true;
    recent.seen.add(seq);
    recent.order.push(seq);
    if (recent.order.length > RECENT_WINDOW) recent.seen.delete(recent.order.shift() as number);
    return false;
  }

  private receiveOverflow(msg: Msg): void {
    this.stats.received++;
    const topic = msg.headers?.get(TOPIC) ?? '';
    if (topic === '') return this.drop('long-topic message without its topic', msg.subject);
    const message = this.decode(topic, msg);
    if (message === null) return;
    try {
      this.local.publish(message);
    } catch (err) {
      this.drop(`long-topic message refused: ${(err as Error).message}`, msg.subject);
    }
  }

  private decode(topic: string, msg: Msg): BusMessage | null {
    const origin = msg.headers?.get(ORIGIN) ?? '';
    const node = msg.headers?.get(NODE) ?? '';
    if (origin === '' || node === '') {
      this.drop('message without its origin or node header', msg.subject);
      return null;
    }
    const contentType = msg.headers?.get(CONTENT_TYPE) ?? '';
    const principal = msg.headers?.get(PRINCIPAL) ?? '';
    return {
      topic,
      payload: msg.data,
      origin,
      node,
      principal: principal === '' ? null : principal,
      ...(contentType === '' ? {} : { contentType }),
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
