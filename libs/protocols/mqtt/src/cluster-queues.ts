import { createHash } from 'node:crypto';
import { topicMatches } from '#broker/bus';
import { type ClusterNode, filterToSubjects, topicToSubject } from '#broker/cluster';
import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  type JetStreamClient,
  jetstreamManager,
  type JetStreamManager,
  type JsMsg,
  RetentionPolicy,
  type StreamConfig,
  StorageType,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { type MqttBroker } from './broker.js';
import { deliveryFor } from './delivery.js';
import { decodeMessage, encodeMessage } from './message-codec.js';
import { type MqttMessage } from './message.js';
import { type MessageQueues } from './message-queues.js';
import { type Delivery, type Session } from './session.js';
import { StreamInterest } from './stream-interest.js';
import { type Subscription } from './subscription.js';

/**
 * How long a feed waits before it makes or reads its consumers again: after a failure (JetStream
 * electing leaders, a server catching up), or after its consumer was deleted behind the broker's back.
 */
const RETRY_MS = 500;

/**
 * How long one pull request waits on the server. A pull lost in a NATS cluster's failover (a server
 * restarting, its routes forming again) shows only as missed heartbeats, at half of this, after which
 * the client pulls again: the library's 30 s left a subscriber without its messages that long.
 */
const PULL_EXPIRES_MS = 5000;

/** NATS refuses control lines past 4 KiB: a longer subject cannot be stored. */
const MAX_SUBJECT_BYTES = 3072;

/** A session's subscription that a feed serves. */
interface Member {
  readonly session: Session;
  subscription: Subscription;
}

/**
 * A queued subscription on this node: its consumers, and the deliveries running while a client it
 * serves is here. A persistent session's subscription has a feed of its own; a shared group on a filter
 * has one feed per node, serving the group's members on that node in turn.
 */
interface Feed {
  readonly key: string;
  readonly filter: string;
  /** Null for a session's own feed. */
  readonly group: string | null;
  readonly durables: readonly string[];
  /** By client id. */
  readonly members: Map<string, Member>;
  cursor: number;
  /** Set once its consumers exist: from then on its QoS 1/2 messages come only from the stream. */
  ready: boolean;
  /** Settles once its consumers exist, or could not be made. */
  opened: Promise<void>;
  /** Failed attempts in a row to make or read its consumers. */
  failures: number;
  /** Its consumers are being read from: a second start waits for none. */
  starting: boolean;
  consuming: ConsumerMessages[];
}

/**
 * QoS 1/2 messages for persistent sessions across the nodes, on JetStream as nats-server's own MQTT
 * support keeps them: one stream (interest retention: a message stays while a consumer still needs it)
 * that every QoS 1/2 publish goes to before the publisher's PUBACK/PUBREC, and one durable consumer per
 * QoS 1/2 subscription of a persistent session (two for a filter ending in '#', whose parent level is a
 * subject of its own), named after the client id and the filter so that any node finds it. The node the
 * client is connected to consumes it within the client's window and acknowledges each message on the
 * client's PUBACK (PUBREC for QoS 2); what was in flight when the client left goes back at once, and what
 * was in flight on a node that died comes back after `cluster.mqttAckWaitMs`, in both cases with DUP set.
 *
 * A shared group on a filter has one durable consumer (two for '#') that every node with a member of it
 * reads while one of them is connected there, handing each message to one member; what a dead node had
 * in flight goes to the others after `cluster.mqttAckWaitMs`. Its consumer is never deleted by a node
 * (another may still have members): JetStream deletes it once no node has read it for the longest
 * session expiry.
 *
 * The session queue's count limit holds across the cluster: a consumer's oldest messages past
 * `maxQueuedMessages` waiting are dropped as they are read, as a full queue drops its oldest. Its byte
 * limit holds on the reading node only (the stream does not count bytes per consumer).
 */
export class ClusterQueues implements MessageQueues {
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private readonly stream: string;
  private readonly prefix: string;
  private readonly feeds = new Map<string, Feed>();
  private stopped = false;
  private readonly interest: StreamInterest;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
    private readonly ackWaitMs: number,
  ) {
    this.stream = `${node.name}-mqtt-msgs`;
    this.prefix = node.subject('mqtt', 'msgs', '');
    this.interest = new StreamInterest(node, log);
  }

  async start(): Promise<void> {
    await this.interest.start();
    this.jsm = await jetstreamManager(this.node.nc);
    this.js = jetstream(this.node.nc);
    const config = {
      name: this.stream,
      subjects: [`${this.prefix}>`],
      retention: RetentionPolicy.Interest,
      storage: StorageType.File,
      // Full: new messages are refused, acknowledged ones are never dropped for them.
      discard: DiscardPolicy.New,
      max_age: nanos(this.broker.config.maxSessionExpirySec * 1000),
      max_bytes: this.node.config.mqttStreamMaxBytes > 0 ? this.node.config.mqttStreamMaxBytes : -1,
      num_replicas: this.node.config.replicas,
    };
    try {
      await this.jsm.streams.add(config);
    } catch {
      // Made by another node already (possibly by another version with other limits): used as it is.
      await this.jsm.streams.info(this.stream);
    }
    this.broker.queues = this;
    // A NATS server back without its JetStream state has no stream and no consumers: both are made again.
    this.node.onConnection((connected) => {
      if (connected) void this.restore(config);
    });
  }

  private async restore(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    try {
      await this.jsm?.streams.add(config);
    } catch {
      // It is there: nothing was lost.
    }
    for (const feed of this.feeds.values()) this.reopen(feed);
  }

  /** The feed's consumers made again, and read from again if a client it serves is here. */
  private reopen(feed: Feed): void {
    this.stopFeed(feed);
    feed.opened = this.open(feed);
  }

  /**
   * A consumer deleted behind the broker's back (an operator, a tool) is made again at once: what was
   * published while it was gone had no reader and is not there for it, the rest goes on.
   */
  private async watch(feed: Feed, messages: ConsumerMessages): Promise<void> {
    for await (const status of messages.status()) {
      if (status.type !== 'consumer_deleted' && status.type !== 'consumer_not_found') continue;
      if (!feed.consuming.includes(messages) || this.feeds.get(feed.key) !== feed) return;
      this.log.warn({ feed: feed.key, why: status.type }, 'mqtt: stream consumer gone, made again');
      // After a moment: a server still removing the consumer's files fails the deletion otherwise.
      this.stopFeed(feed);
      return this.later(feed, () => (feed.opened = this.open(feed)));
    }
  }

  stop(): void {
    this.stopped = true;
    this.interest.stop();
    for (const feed of this.feeds.values()) this.stopFeed(feed);
    this.broker.queues = null;
  }

  wants(topic: string): boolean {
    return this.interest.wants(topic);
  }

  isQueued(clientId: string, subscription: Subscription): boolean {
    return this.feeds.get(keyOf(clientId, subscription))?.ready === true;
  }

  async store(message: MqttMessage): Promise<void> {
    const js = this.js;
    if (js === null) throw new Error('the message stream is not open');
    const subject = this.prefix + topicToSubject(message.topic);
    if (Buffer.byteLength(subject) > MAX_SUBJECT_BYTES)
      throw new Error('topic too long for the message stream');
    await js.publish(subject, encodeMessage(message));
  }

  subscribed(session: Session, subscription: Subscription): void {
    const key = keyOf(session.clientId, subscription);
    const existing = this.feeds.get(key);
    const member = existing?.members.get(session.clientId);
    if (existing !== undefined && (member !== undefined || existing.group !== null)) {
      // The same filter again: its consumers and what they hold stay, with the new options.
      if (!eligible(session, subscription)) return this.unsubscribed(session, subscription);
      if (member !== undefined && member.session === session) member.subscription = subscription;
      else existing.members.set(session.clientId, { session, subscription });
      if (session.owner !== null) void this.consume(existing);
      return;
    }
    if (!eligible(session, subscription)) return;
    const feed: Feed = {
      key,
      filter: subscription.filter,
      group: subscription.group,
      durables: filterToSubjects(subscription.filter).map((_, i) => durableOf(key, i)),
      members: new Map([[session.clientId, { session, subscription }]]),
      cursor: 0,
      ready: false,
      opened: Promise.resolve(),
      failures: 0,
      starting: false,
      consuming: [],
    };
    this.feeds.set(key, feed);
    feed.opened = this.open(feed);
  }

  opened(clientId: string, subscription: Subscription): Promise<void> {
    return this.feeds.get(keyOf(clientId, subscription))?.opened ?? Promise.resolve();
  }

  unsubscribed(session: Session, subscription: Subscription): void {
    const feed = this.feeds.get(keyOf(session.clientId, subscription));
    if (feed === undefined || feed.members.get(session.clientId)?.session !== session) return;
    // What is in flight completes (MQTT 3.10.4); its acknowledgement finds no consumer, which is moot.
    this.leave(feed, session.clientId, feed.group === null);
  }

  attached(session: Session): void {
    for (const subscription of session.subscriptions.values()) {
      const feed = this.feeds.get(keyOf(session.clientId, subscription));
      if (feed === undefined || !feed.members.has(session.clientId)) this.subscribed(session, subscription);
      else void this.consume(feed);
    }
  }

  detached(session: Session): void {
    for (const feed of this.feedsOf(session)) if (this.target(feed) === null) this.stopFeed(feed);
    this.handBack(session);
  }

  ended(session: Session, handedOver: boolean): void {
    this.detached(session);
    for (const feed of this.feedsOf(session)) {
      this.leave(feed, session.clientId, feed.group === null && !handedOver);
    }
  }

  discard(clientId: string, subscriptions: readonly Subscription[]): void {
    for (const subscription of subscriptions) {
      const key = keyOf(clientId, subscription);
      // A group's consumer serves other members; a feed in use here belongs to a session again.
      if (subscription.group !== null || this.feeds.has(key)) continue;
      filterToSubjects(subscription.filter).forEach((_, i) => {
        this.dropConsumer(durableOf(key, i));
      });
    }
  }

  /** Deletes a consumer, and then its filter from the stream's interest unless a feed here made it again. */
  private dropConsumer(durable: string): void {
    const forget = (): void => {
      for (const feed of this.feeds.values()) if (feed.durables.includes(durable)) return;
      this.interest.remove(durable);
    };
    (this.jsm?.consumers.delete(this.stream, durable) ?? Promise.resolve()).then(forget, forget);
  }

  /** A member leaves its feed; the last one takes the feed with it (and its consumers, if `drop`). */
  private leave(feed: Feed, clientId: string, drop: boolean): void {
    feed.members.delete(clientId);
    if (feed.members.size > 0) {
      if (this.target(feed) === null) this.stopFeed(feed);
      return;
    }
    this.feeds.delete(feed.key);
    this.stopFeed(feed);
    if (!drop) return;
    for (const durable of feed.durables) {
      this.dropConsumer(durable);
    }
  }

  private feedsOf(session: Session): Feed[] {
    return [...this.feeds.values()].filter((feed) => feed.members.get(session.clientId)?.session === session);
  }

  /** The member the next message goes to: its connected members in turn; null when none is here. */
  private target(feed: Feed): Member | null {
    const members = [...feed.members.values()];
    for (let step = 0; step < members.length; step++) {
      const member = members[(feed.cursor + step) % members.length] as Member;
      if (member.session.owner === null) continue;
      feed.cursor = (feed.cursor + step + 1) % members.length;
      return member;
    }
    return null;
  }

  /** Creates the subscription's consumers (or finds them, made by another node), then consumes if its client is here. */
  private async open(feed: Feed): Promise<void> {
    const jsm = this.jsm;
    if (jsm === null) return;
    const subjects = filterToSubjects(feed.filter).map((subject) => this.prefix + subject);
    const expiryMs = this.broker.config.maxSessionExpirySec * 1000;
    try {
      let revision = 0;
      for (const [i, durable] of feed.durables.entries()) {
        // Stored from now on, on every node once its watch has it (`everywhere` below waits for that).
        revision = await this.interest.add(durable, feed.filter);
        await jsm.consumers.add(this.stream, {
          durable_name: durable,
          filter_subject: subjects[i] as string,
          ack_policy: AckPolicy.Explicit,
          ack_wait: nanos(this.ackWaitMs),
          max_ack_pending: this.broker.config.maxInflight,
          deliver_policy: DeliverPolicy.New,
          // A group's consumer outlives any one node's members: JetStream removes it once nobody reads it.
          ...(feed.group !== null && expiryMs > 0 ? { inactive_threshold: nanos(expiryMs) } : {}),
        });
      }
      // The SUBACK this feeds waits until no node would acknowledge unstored what these consumers read.
      await this.interest.everywhere(revision);
    } catch (err) {
      this.failed(feed, err, 'mqtt: stream consumer not made yet; its QoS 1/2 messages stay on their node');
      return this.later(feed, () => (feed.opened = this.open(feed)));
    }
    if (this.feeds.get(feed.key) !== feed) return;
    feed.ready = true;
    await this.consume(feed);
  }

  /** Runs `step` in a moment if the feed is still in use then. */
  private later(feed: Feed, step: () => Promise<void>): void {
    this.broker.clock.after(RETRY_MS, () => {
      if (!this.stopped && this.feeds.get(feed.key) === feed) void step();
    });
  }

  /** The first failure of a streak is a warning; those after it, until a success, are debug lines. */
  private failed(feed: Feed, err: unknown, what: string): void {
    const fields = { feed: feed.key, err: (err as Error).message, failures: ++feed.failures };
    if (feed.failures === 1) this.log.warn(fields, what);
    else this.log.debug(fields, what);
  }

  private async consume(feed: Feed): Promise<void> {
    const js = this.js;
    if (js === null || !feed.ready || feed.starting || feed.consuming.length > 0) return;
    feed.starting = true;
    try {
      await this.consumeWith(js, feed);
    } finally {
      feed.starting = false;
    }
  }

  private async consumeWith(js: JetStreamClient, feed: Feed): Promise<void> {
    for (const durable of feed.durables) {
      try {
        const consumer = await js.consumers.get(this.stream, durable);
        const member = [...feed.members.values()].find((m) => m.session.owner !== null);
        if (member === undefined || this.feeds.get(feed.key) !== feed) return;
        // Within the client's window: what it cannot take now stays in the stream, not in this node's queue.
        const window =
          feed.group === null
            ? (member.session.owner?.sendWindow ?? this.broker.config.maxInflight)
            : this.broker.config.maxInflight;
        const messages = await consumer.consume({
          max_messages: Math.max(1, Math.min(window, this.broker.config.maxInflight)),
          expires: PULL_EXPIRES_MS,
          callback: (msg) => this.deliver(feed, msg),
        });
        feed.consuming.push(messages);
        void this.watch(feed, messages);
      } catch (err) {
        // All of them or none: what was started stops, and the whole feed is read again in a moment.
        this.stopFeed(feed);
        this.failed(feed, err, 'mqtt: stream consumer not read yet');
        return this.later(feed, () => this.consume(feed));
      }
    }
    feed.failures = 0;
  }

  private deliver(feed: Feed, msg: JsMsg): void {
    const member = this.feeds.get(feed.key) === feed ? this.target(feed) : null;
    if (member === null) return msg.nak();
    const { session, subscription } = member;
    const message = decodeMessage(msg.data);
    if (message === null) {
      this.log.warn({ subject: msg.subject }, 'mqtt: a stream message that is not one dropped');
      return msg.term();
    }
    if (subscription.noLocal && message.publisherId === session.clientId) return msg.ack();
    // NATS wildcards match '$'-topics too, which MQTT keeps out of leading wildcards (4.7.2).
    if (!topicMatches(feed.filter, message.topic)) return msg.ack();
    // The session's queue limit across the cluster: past the newest `maxQueuedMessages` waiting behind
    // it, a message is one of the oldest, dropped as a full queue drops them.
    if (!msg.redelivered && msg.info.pending >= Math.max(1, this.broker.config.maxQueuedMessages)) {
      this.broker.stats.publishDropped++;
      this.broker.hooks.dropped?.('session queue full', session.clientId, message.topic);
      return msg.ack();
    }
    const delivery: Delivery = {
      ...deliveryFor(message, [subscription], false),
      settle: (done) => (done ? msg.ack() : msg.nak()),
      redelivered: msg.redelivered,
    };
    this.broker.deliver(session, delivery);
    // A member subscribed at QoS 0 gets it at most once: sent (or not), it is done.
    if (delivery.qos === 0) msg.ack();
  }

  private stopFeed(feed: Feed): void {
    for (const messages of feed.consuming) messages.stop();
    feed.consuming = [];
  }

  /** Deliveries from the stream that the session holds go back to it now, for the next reader. */
  private handBack(session: Session): void {
    if (session.inflightCount > 0) {
      for (const [packetId, inflight] of session.inflight) {
        if (inflight.settle === undefined || inflight.state !== 'publish') continue;
        session.inflight.delete(packetId);
        inflight.settle(false);
      }
    }
    if (session.queuedCount > 0) {
      for (const delivery of session.queue.takeWhere((d) => d.settle !== undefined)) delivery.settle?.(false);
    }
  }
}

/**
 * QoS 1/2 subscriptions of persistent sessions outlive their node; a shared group's QoS 1/2 messages go
 * through the stream whatever its members' QoS and sessions, so every node serves the group alike.
 */
function eligible(session: Session, subscription: Subscription): boolean {
  return subscription.group !== null || (session.expirySec > 0 && subscription.qos > 0);
}

/** A session's own subscription, or a shared group on a filter (one feed for all its members here). */
function keyOf(clientId: string, subscription: Subscription): string {
  return subscription.group === null
    ? `${clientId}\u0000${subscription.raw}`
    : `\u0000${subscription.group}\u0000${subscription.filter}`;
}

/** A consumer name every node derives alike: [A-Za-z0-9_-], short. */
function durableOf(key: string, index: number): string {
  return `mq_${createHash('sha256').update(`${key}\u0000${index}`).digest('base64url').slice(0, 32)}`;
}
