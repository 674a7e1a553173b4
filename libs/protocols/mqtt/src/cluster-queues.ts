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
  StorageType,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { type MqttBroker, deliveryFor } from './broker.js';
import { decodeMessage, encodeMessage } from './message-codec.js';
import { type MqttMessage } from './message.js';
import { type MessageQueues } from './message-queues.js';
import { type Delivery, type Session } from './session.js';
import { type Subscription } from './subscription.js';

/** NATS refuses control lines past 4 KiB: a longer subject cannot be stored. */
const MAX_SUBJECT_BYTES = 3072;

/** A queued subscription on this node: its consumers, and the deliveries running while its client is here. */
interface Feed {
  readonly session: Session;
  subscription: Subscription;
  readonly durables: readonly string[];
  /** Set once its consumers exist: from then on its QoS 1/2 messages come only from the stream. */
  ready: boolean;
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
 * Not here: shared subscriptions (their QoS 1/2 stays on the node of each member), and the session
 * queue limits across the cluster (the stream keeps a session's messages up to the session expiry).
 */
export class ClusterQueues implements MessageQueues {
  private js: JetStreamClient | null = null;
  private jsm: JetStreamManager | null = null;
  private readonly stream: string;
  private readonly prefix: string;
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly node: ClusterNode,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
    private readonly ackWaitMs: number,
  ) {
    this.stream = `${node.name}-mqtt-msgs`;
    this.prefix = node.subject('mqtt', 'msgs', '');
  }

  async start(): Promise<void> {
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

  private async restore(config: Parameters<JetStreamManager['streams']['add']>[0]): Promise<void> {
    try {
      await this.jsm?.streams.add(config);
    } catch {
      // It is there: nothing was lost.
    }
    for (const feed of this.feeds.values()) {
      this.stopFeed(feed);
      void this.open(feed);
    }
  }

  stop(): void {
    for (const feed of this.feeds.values()) this.stopFeed(feed);
    this.broker.queues = null;
  }

  isQueued(clientId: string, subscription: Subscription): boolean {
    return this.feeds.get(keyOf(clientId, subscription.raw))?.ready === true;
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
    const key = keyOf(session.clientId, subscription.raw);
    const existing = this.feeds.get(key);
    if (existing !== undefined) {
      // The same filter again: its consumers and what they hold stay, with the new options.
      if (eligible(session, subscription)) existing.subscription = subscription;
      else this.unsubscribed(session, existing.subscription);
      return;
    }
    if (!eligible(session, subscription)) return;
    const feed: Feed = {
      session,
      subscription,
      durables: filterToSubjects(subscription.filter).map((_, i) =>
        durableOf(session.clientId, subscription.raw, i),
      ),
      ready: false,
      consuming: [],
    };
    this.feeds.set(key, feed);
    void this.open(feed);
  }

  unsubscribed(session: Session, subscription: Subscription): void {
    const key = keyOf(session.clientId, subscription.raw);
    const feed = this.feeds.get(key);
    if (feed === undefined) return;
    this.feeds.delete(key);
    // What is in flight completes (MQTT 3.10.4); its acknowledgement finds no consumer, which is moot.
    this.stopFeed(feed);
    for (const durable of feed.durables) {
      this.jsm?.consumers.delete(this.stream, durable).catch(() => undefined);
    }
  }

  attached(session: Session): void {
    for (const subscription of session.subscriptions.values()) {
      const feed = this.feeds.get(keyOf(session.clientId, subscription.raw));
      if (feed === undefined) this.subscribed(session, subscription);
      else if (feed.ready && feed.consuming.length === 0) void this.consume(feed);
    }
  }

  detached(session: Session): void {
    for (const feed of this.feedsOf(session)) this.stopFeed(feed);
    this.handBack(session);
  }

  ended(session: Session, handedOver: boolean): void {
    this.detached(session);
    for (const feed of this.feedsOf(session)) {
      this.feeds.delete(keyOf(session.clientId, feed.subscription.raw));
      if (handedOver) continue;
      for (const durable of feed.durables) {
        this.jsm?.consumers.delete(this.stream, durable).catch(() => undefined);
      }
    }
  }

  private feedsOf(session: Session): Feed[] {
    return [...this.feeds.values()].filter((feed) => feed.session === session);
  }

  /** Creates the subscription's consumers (or finds them, made by another node), then consumes if its client is here. */
  private async open(feed: Feed): Promise<void> {
    const jsm = this.jsm;
    if (jsm === null) return;
    const subjects = filterToSubjects(feed.subscription.filter).map((subject) => this.prefix + subject);
    try {
      for (const [i, durable] of feed.durables.entries()) {
        await jsm.consumers.add(this.stream, {
          durable_name: durable,
          filter_subject: subjects[i] as string,
          ack_policy: AckPolicy.Explicit,
          ack_wait: nanos(this.ackWaitMs),
          max_ack_pending: this.broker.config.maxInflight,
          deliver_policy: DeliverPolicy.New,
        });
      }
    } catch (err) {
      this.log.warn(
        { clientId: feed.session.clientId, filter: feed.subscription.raw, err: (err as Error).message },
        'mqtt: no stream consumer for a subscription; its QoS 1/2 messages stay on their node',
      );
      return;
    }
    if (this.feeds.get(keyOf(feed.session.clientId, feed.subscription.raw)) !== feed) return;
    feed.ready = true;
    if (feed.session.owner !== null) await this.consume(feed);
  }

  private async consume(feed: Feed): Promise<void> {
    const js = this.js;
    if (js === null || feed.consuming.length > 0) return;
    for (const durable of feed.durables) {
      try {
        const consumer = await js.consumers.get(this.stream, durable);
        if (
          feed.session.owner === null ||
          this.feeds.get(keyOf(feed.session.clientId, feed.subscription.raw)) !== feed
        ) {
          return;
        }
        // Within the client's window: what it cannot take now stays in the stream, not in this node's queue.
        const window = feed.session.owner?.sendWindow ?? this.broker.config.maxInflight;
        feed.consuming.push(
          await consumer.consume({
            max_messages: Math.max(1, Math.min(window, this.broker.config.maxInflight)),
            callback: (msg) => this.deliver(feed, msg),
          }),
        );
      } catch (err) {
        this.log.warn(
          { clientId: feed.session.clientId, err: (err as Error).message },
          'mqtt: stream consumer not read',
        );
      }
    }
  }

  private deliver(feed: Feed, msg: JsMsg): void {
    const { session, subscription } = feed;
    if (session.owner === null || this.feeds.get(keyOf(session.clientId, subscription.raw)) !== feed) {
      return msg.nak();
    }
    const message = decodeMessage(msg.data);
    if (message === null) {
      this.log.warn({ subject: msg.subject }, 'mqtt: a stream message that is not one dropped');
      return msg.term();
    }
    if (subscription.noLocal && message.publisherId === session.clientId) return msg.ack();
    // NATS wildcards match '$'-topics too, which MQTT keeps out of leading wildcards (4.7.2).
    if (!topicMatches(subscription.filter, message.topic)) return msg.ack();
    const delivery: Delivery = {
      ...deliveryFor(message, [subscription], false),
      settle: (done) => (done ? msg.ack() : msg.nak()),
      redelivered: msg.redelivered,
    };
    this.broker.deliver(session, delivery);
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

/** Only QoS 1/2 subscriptions of persistent sessions outlive their node; shared ones stay with their members. */
function eligible(session: Session, subscription: Subscription): boolean {
  return session.expirySec > 0 && subscription.qos > 0 && subscription.group === null;
}

function keyOf(clientId: string, raw: string): string {
  return `${clientId}\u0000${raw}`;
}

/** A consumer name every node derives alike: [A-Za-z0-9_-], short. */
function durableOf(clientId: string, raw: string, index: number): string {
  return `mq_${createHash('sha256').update(`${clientId}\u0000${raw}\u0000${index}`).digest('base64url').slice(0, 32)}`;
}
