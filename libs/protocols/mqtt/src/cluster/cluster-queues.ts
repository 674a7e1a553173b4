import { type ClusterNode, createOrOpen, filterToSubjects, led, topicToSubject } from '#broker/cluster';
import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  type StreamConfig,
  StorageType,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { durableOf, eligible, type Feed, keyOf, target } from './stream-feed.js';
import { FeedReader } from './feed-reader.js';
import { encodeMessage } from './message-codec.js';
import { type MqttMessage } from '../message.js';
import { type MessageQueues } from '../message-queues.js';
import { type Session } from '../mqtt-session.js';
import { StreamInterest } from './stream-interest.js';
import { StreamAlarm } from './stream-alarm.js';
import { StreamPublisher, StreamRefusal } from './stream-publisher.js';
import { type Subscription } from '../subscription.js';

/** NATS refuses control lines past 4 KiB: a longer subject cannot be stored. */
const MAX_SUBJECT_BYTES = 3072;
/** Writes to the stream awaiting their acknowledgement at once; past it a QoS 1/2 publish is refused. */
const MAX_WRITES_IN_FLIGHT = 10_000;

/**
 * QoS 1/2 messages for persistent sessions across the nodes, on JetStream as nats-server's own MQTT
 * support keeps them: one stream (interest retention: a message stays while a consumer still needs it)
 * that every QoS 1/2 publish goes to before the publisher's PUBACK/PUBREC, and one durable consumer per
 * QoS 1/2 subscription of a persistent session (two for a filter ending in '#', whose parent level is a
 * subject of its own), named after the client id and the filter so that any node finds it. The node the
 * client is connected to consumes it within the client's window and acknowledges each message on the
 * client's PUBACK (PUBREC for QoS 2); what was in flight when the client left goes back at once, and what
 * was in flight on a node that died goes back as the session's consumers open on its next node (after
 * `mqtt.cluster.ackWaitMs` if nobody takes the session over), in both cases with DUP set.
 *
 * A shared group on a filter has one durable consumer (two for '#') that every node with a member of it
 * reads while one of them is connected there, handing each message to one member; what a dead node had
 * in flight goes to the others after `mqtt.cluster.ackWaitMs`. Its consumer is never deleted by a node
 * (another may still have members): JetStream deletes it once no node has read it for the longest
 * session expiry.
 *
 * The session queue's count limit holds across the cluster: a consumer's oldest messages past
 * `maxQueuedMessages` waiting are dropped as they are read, as a full queue drops its oldest. Its byte
 * limit holds on the reading node only (the stream does not count bytes per consumer).
 */
export class ClusterQueues implements MessageQueues {
  private readonly stream: string;
  private readonly prefix: string;
  private readonly feeds = new Map<string, Feed>();
  private readonly interest: StreamInterest;
  private readonly reader: FeedReader;
  private readonly publisher: StreamPublisher;
  /** Raised while the stream refuses writes or is nearly full (the dashboard's alarms judge it). */
  readonly alarm: StreamAlarm;

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
  ) {
    this.stream = `${node.name}-mqtt-msgs`;
    this.prefix = node.subject('mqtt', 'msgs', '');
    this.interest = new StreamInterest(node, log);
    this.reader = new FeedReader(
      node.nc,
      node.membership,
      broker,
      log,
      this.interest,
      this.feeds,
      this.stream,
      this.prefix,
      broker.config.cluster.ackWaitMs,
    );
    this.publisher = new StreamPublisher(node.nc, MAX_WRITES_IN_FLIGHT);
    this.alarm = new StreamAlarm(
      this.stream,
      () => this.reader.jsm,
      () => node.isConnected,
    );
  }

  async start(): Promise<void> {
    await this.interest.start();
    // Its first request is the stream's creation, which waits out a NATS cluster still electing its leaders.
    const jsm = await jetstreamManager(this.node.nc, { checkAPI: false });
    this.reader.jsm = jsm;
    this.reader.js = jetstream(this.node.nc);
    this.publisher.start();
    const config = {
      name: this.stream,
      subjects: [`${this.prefix}>`],
      retention: RetentionPolicy.Interest,
      storage: StorageType.File,
      // Full: new messages are refused, acknowledged ones are never dropped for them.
      discard: DiscardPolicy.New,
      max_age: nanos(this.broker.config.maxSessionExpirySec * 1000),
      max_bytes:
        this.broker.config.cluster.streamMaxBytes > 0 ? this.broker.config.cluster.streamMaxBytes : -1,
      num_replicas: this.node.config.replicas,
    };
    // Made by another node already (possibly by another version with other limits): used as it is.
    await createOrOpen(
      `stream ${this.stream}`,
      () => jsm.streams.add(config),
      () => jsm.streams.info(this.stream),
      async () => led(await jsm.streams.info(this.stream)),
    );
    this.broker.queues = this;
    // A NATS server back without its JetStream state has no stream and no consumers: both are made again.
    this.node.onConnection((connected) => {
      if (connected) void this.restore(config);
      else this.reader.disconnected();
    });
  }

  private async restore(config: Partial<StreamConfig> & { name: string }): Promise<void> {
    try {
      await this.reader.jsm?.streams.add(config);
    } catch {
      // It is there: nothing was lost.
    }
    await this.reader.reconnected();
    for (const feed of this.feeds.values()) this.reader.reopen(feed);
  }

  stop(): void {
    this.publisher.stop();
    this.reader.stop();
    this.interest.stop();
    for (const feed of this.feeds.values()) this.reader.stopFeed(feed);
    this.broker.queues = null;
  }

  wants(topic: string): boolean {
    return this.interest.wants(topic);
  }

  takes(clientId: string, subscription: Subscription, message: MqttMessage): boolean {
    const feed = this.feeds.get(keyOf(clientId, subscription));
    if (feed === undefined) return false;
    if (feed.ready) return true;
    if (feed.held === null || feed.held.length >= this.broker.config.maxQueuedMessages) return false;
    feed.held.push(message);
    return true;
  }

  async store(message: MqttMessage): Promise<void> {
    if (this.reader.js === null) throw new Error('the message stream is not open');
    const subject = this.prefix + topicToSubject(message.topic);
    if (Buffer.byteLength(subject) > MAX_SUBJECT_BYTES)
      throw new Error('topic too long for the message stream');
    try {
      this.reader.stored(await this.publisher.publish(subject, encodeMessage(message)));
    } catch (err) {
      if (err instanceof StreamRefusal) this.alarm.refused();
      throw err;
    }
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
      if (session.owner !== null) void this.reader.consume(existing);
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
      held: [],
      opened: Promise.resolve(),
      cursors: new Map(),
      failures: 0,
      starting: false,
      consuming: [],
    };
    this.feeds.set(key, feed);
    feed.opened = this.reader.open(feed);
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
      else void this.reader.consume(feed);
    }
  }

  detached(session: Session): void {
    for (const feed of this.feedsOf(session)) if (target(feed) === null) this.reader.stopFeed(feed);
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

  async waiting(session: Session): Promise<number | null> {
    const jsm = this.reader.jsm;
    if (jsm === null) return null;
    let total = 0;
    for (const subscription of session.subscriptions.values()) {
      // A group's messages are the group's, not one member's.
      if (subscription.group !== null || !eligible(session, subscription)) continue;
      const key = keyOf(session.clientId, subscription);
      for (const [i] of filterToSubjects(subscription.filter).entries()) {
        try {
          const info = await jsm.consumers.info(this.stream, durableOf(key, i));
          total += info.num_pending + info.num_ack_pending;
        } catch {
          // Not made yet (nothing stored for it), or JetStream did not answer: not a count to show.
          return null;
        }
      }
    }
    return total;
  }

  /** Deletes a consumer, and then its filter from the stream's interest unless a feed here made it again. */
  private dropConsumer(durable: string): void {
    const forget = (): void => {
      for (const feed of this.feeds.values()) if (feed.durables.includes(durable)) return;
      this.interest.remove(durable);
    };
    (this.reader.jsm?.consumers.delete(this.stream, durable) ?? Promise.resolve()).then(forget, forget);
  }

  /** A member leaves its feed; the last one takes the feed with it (and its consumers, if `drop`). */
  private leave(feed: Feed, clientId: string, drop: boolean): void {
    feed.members.delete(clientId);
    if (feed.members.size > 0) {
      if (target(feed) === null) this.reader.stopFeed(feed);
      return;
    }
    this.feeds.delete(feed.key);
    this.reader.stopFeed(feed);
    if (!drop) return;
    for (const durable of feed.durables) {
      this.dropConsumer(durable);
    }
  }

  private feedsOf(session: Session): Feed[] {
    return [...this.feeds.values()].filter((feed) => feed.members.get(session.clientId)?.session === session);
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
