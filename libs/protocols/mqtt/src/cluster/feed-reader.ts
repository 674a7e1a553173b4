import { topicMatches } from '#broker/bus';
import { filterToSubjects, type Membership } from '#broker/cluster';
import {
  AckPolicy,
  type ConsumerInfo,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/nats-core';
import { type Logger } from 'pino';
import { type MqttBroker } from '../mqtt-broker.js';
import { ConsumerCursor } from './consumer-cursor.js';
import { deliveryFor } from '../delivery.js';
import { type Feed, target } from './stream-feed.js';
import { decodeMessage } from './message-codec.js';
import { LostWrites } from './lost-writes.js';
import { returnPending } from './pending-return.js';
import { type Delivery } from '../delivery.js';
import { type Session } from '../mqtt-session.js';
import { type StreamInterest } from './stream-interest.js';

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

/** How long a QoS 2 acknowledgement waits for the stream's confirmation before its PUBREL goes anyway. */
const ACK_CONFIRM_MS = 5000;

/**
 * A stream message's packet id, the same on every node: a redelivery after a node move reaches the
 * client under the id it may still hold (QoS 2: received, PUBREL awaited), and the client takes it for
 * the same message. The session falls back to a free id when this one is in use.
 */
function packetIdOf(streamSequence: number): number {
  return (streamSequence % 65535) + 1;
}

/**
 * When the stream stored a message (the server's clock, ms): with its sequence, it names the message, as
 * a nats-server that lost writes gives their sequences to new messages.
 */
function storedMsOf(msg: JsMsg): number {
  return Math.floor(msg.info.timestampNanos / 1e6);
}

/** JetStream's "consumer not found" (10014). */
function notFound(err: unknown): boolean {
  return (err as { code?: number }).code === 10014 || /consumer not found/i.test((err as Error).message);
}

/**
 * The JetStream side of the feeds on this node: each feed's consumers made (or found), read within its
 * client's window while a client it serves is here, and made or read again after a failure or a loss.
 */
export class FeedReader {
  js: JetStreamClient | null = null;
  jsm: JetStreamManager | null = null;
  private stopped = false;
  /**
   * The stream's last sequence when NATS last came back (unknown, so every one, from a disconnect until
   * then). A nats-server killed and started again forgets its consumers' last deliveries and gives them
   * out again as new, on whichever node reads them, where no cursor knows them: any sequence the stream
   * held then may be a repeat, and goes out with DUP ("might be a re-delivery", MQTT 3.3.1.1), as does a
   * message that waited in the stream across the restart for a client that was away.
   */
  private repeatsUpTo = 0;
  private readonly lostWrites: LostWrites;

  constructor(
    private readonly nc: NatsConnection,
    /** A delivery waits while this node catches up on a stall: its session may have moved meanwhile. */
    private readonly membership: Membership,
    private readonly broker: MqttBroker,
    private readonly log: Logger,
    private readonly interest: StreamInterest,
    /** ClusterQueues' feeds by key: a feed no longer there is no longer in use. */
    private readonly feeds: ReadonlyMap<string, Feed>,
    private readonly stream: string,
    private readonly prefix: string,
    private readonly ackWaitMs: number,
  ) {
    this.lostWrites = new LostWrites(stream, log);
  }

  /** NATS went away: until the stream's end is known again, a message read may be a repeat. */
  disconnected(): void {
    this.repeatsUpTo = Infinity;
    this.lostWrites.lost();
  }

  /** The stream took `sequence` from this node (its acknowledgement came). */
  stored(sequence: number): void {
    this.lostWrites.known(sequence);
  }

  /**
   * NATS is back: the stream's end, and whether it lost writes (`LostWrites`), asked for again in a
   * moment while JetStream does not answer.
   */
  async reconnected(): Promise<void> {
    const { jsm, js } = this;
    if (jsm === null || js === null) return;
    try {
      const { state } = await jsm.streams.info(this.stream);
      this.repeatsUpTo = state.last_seq;
      await this.lostWrites.check(jsm, js, state, (held) => {
        for (const feed of this.feeds.values())
          for (const cursor of feed.cursors.values()) cursor.endsAt(held);
      });
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'mqtt: the stream not read after NATS came back');
      this.broker.clock.after(RETRY_MS, () => {
        if (!this.stopped) void this.reconnected();
      });
    }
  }

  /** Shutdown: no feed is tried again. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * The feed's consumers made again, and read from again if a client it serves is here; what they hold
   * unacknowledged is this node's own, in flight to its client.
   */
  reopen(feed: Feed): void {
    this.stopFeed(feed);
    for (const cursor of feed.cursors.values()) cursor.restarted();
    feed.opened = this.open(feed, false);
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
      return this.later(feed, () => (feed.opened = this.open(feed, false)));
    }
  }

  /**
   * Creates the subscription's consumers (or finds them, made by another node), then consumes if its
   * client is here. A session's feed opening on this node (`inherited`) sends back at once what its
   * consumers' last reader left unacknowledged: that node is gone or has let the session go.
   */
  async open(feed: Feed, inherited = true): Promise<void> {
    const jsm = this.jsm;
    if (jsm === null) return;
    const subjects = filterToSubjects(feed.filter).map((subject) => this.prefix + subject);
    const expiryMs = this.broker.config.maxSessionExpirySec * 1000;
    // Only a feed holding what was routed to it asks whether its consumers were there already.
    let existed = feed.held !== null;
    try {
      let revision = 0;
      for (const [i, durable] of feed.durables.entries()) {
        // Only "not found" says it was not there: a timeout says nothing, and a resumed session's was.
        if (existed)
          existed = await jsm.consumers.info(this.stream, durable).then(Boolean, (err) => !notFound(err));
        // Stored from now on, on every node once its watch has it (`everywhere` below waits for that).
        revision = await this.interest.add(durable, feed.filter);
        const info = await jsm.consumers
          .add(this.stream, {
            durable_name: durable,
            filter_subject: subjects[i] as string,
            ack_policy: AckPolicy.Explicit,
            ack_wait: nanos(this.ackWaitMs),
            max_ack_pending: this.broker.config.maxInflight,
            deliver_policy: DeliverPolicy.New,
            // A group's consumer outlives any one node's members: JetStream removes it once nobody reads it.
            ...(feed.group !== null && expiryMs > 0 ? { inactive_threshold: nanos(expiryMs) } : {}),
          })
          .catch((err: unknown) => this.woundBack(jsm, durable, err));
        const cursor = this.cursorOf(feed, durable);
        cursor.opened(info);
        if (feed.group === null) {
          for (const { session } of feed.members.values())
            cursor.deliveredUpTo(session.streamDelivered?.get(durable) ?? 0);
        }
        // A group's consumer is read by its members' nodes at once: what they hold is theirs.
        if (inherited && feed.group === null) await this.sendBack(feed, info);
      }
      // The SUBACK this feeds waits until no node would acknowledge unstored what these consumers read.
      await this.interest.everywhere(revision);
    } catch (err) {
      this.failed(feed, err, 'mqtt: stream consumer not made yet; its QoS 1/2 messages stay on their node');
      this.release(feed, true);
      return this.later(feed, () => (feed.opened = this.open(feed, inherited)));
    }
    if (this.feeds.get(feed.key) !== feed) return;
    feed.ready = true;
    this.release(feed, !existed);
    await this.consume(feed);
  }

  /** A consumer `windBack` made again starts at a sequence, which `add` cannot match: it is taken as it is. */
  private async woundBack(jsm: JetStreamManager, durable: string, err: unknown): Promise<ConsumerInfo> {
    const info = await jsm.consumers.info(this.stream, durable).catch(() => null);
    if (info?.config.deliver_policy !== DeliverPolicy.StartSequence) throw err;
    return info;
  }

  /** What a consumer's last reader left unacknowledged comes again now, not after the ack wait. */
  private async sendBack(feed: Feed, info: ConsumerInfo): Promise<void> {
    try {
      const named = await returnPending(this.nc, info);
      if (named > 0)
        this.log.info(
          { feed: feed.key, pending: info.num_ack_pending },
          'mqtt: deliveries left in flight sent again',
        );
    } catch (err) {
      this.log.warn(
        { feed: feed.key, err: (err as Error).message },
        'mqtt: deliveries left in flight come again after the ack wait',
      );
    }
  }

  /**
   * What the feed held while it opened goes out from here (`deliver`: its consumers are new, and have
   * not got it) or is left to the stream. A session's feed gives each message to its member; a group's,
   * to one connected member in turn.
   */
  private release(feed: Feed, deliver: boolean): void {
    const held = feed.held;
    feed.held = null;
    if (held === null || !deliver) return;
    const members = [...feed.members.values()];
    if (feed.group === null) {
      for (const { session, subscription } of members) {
        for (const message of held) this.broker.deliver(session, deliveryFor(message, [subscription], false));
      }
      return;
    }
    for (const message of held) {
      const member = target(feed) ?? members[0];
      if (member !== undefined)
        this.broker.deliver(member.session, deliveryFor(message, [member.subscription], false));
    }
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

  async consume(feed: Feed): Promise<void> {
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
          callback: (msg) => this.deliver(feed, durable, msg),
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

  private deliver(feed: Feed, durable: string, msg: JsMsg): void {
    const catchingUp = this.membership.caughtUp();
    if (catchingUp !== null) return void catchingUp.then(() => this.deliver(feed, durable, msg));
    const cursor = this.cursorOf(feed, durable);
    const storedMs = storedMsOf(msg);
    const reading = cursor.read(msg.info.streamSequence, msg.redelivered, storedMs);
    this.lostWrites.known(msg.info.streamSequence);
    // The server's repeat of a message this consumer acknowledged already: nothing to deliver.
    if (reading === 'done') return msg.ack();
    const member = this.feeds.get(feed.key) === feed ? target(feed) : null;
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
    if (reading === 'new' && msg.info.pending >= Math.max(1, this.broker.config.maxQueuedMessages)) {
      this.broker.stats.publishDropped++;
      this.broker.hooks.dropped?.('session queue full', session.clientId, message.topic);
      return msg.ack();
    }
    const base = deliveryFor(message, [subscription], false);
    const packetId = packetIdOf(msg.info.streamSequence);
    if (feed.group === null) session.delivered(durable, msg.info.streamSequence);
    const again = reading === 'again' || msg.info.streamSequence <= this.repeatsUpTo;
    // Its client has it already (PUBREC came, here or on the node it left): not sent again, and done once
    // the session's record says so; until then the stream keeps it (sent again after its ack wait), for a
    // node the session may move to without that record.
    if (base.qos === 2 && again && session.hasReceived(msg.info.streamSequence, packetId, storedMs)) {
      void this.acknowledgeRecorded(session, msg, cursor);
      return;
    }
    const delivery: Delivery = {
      ...base,
      settle: (done) => (done ? this.settled(session, msg, base.qos, cursor) : msg.nak()),
      packetId,
      streamSequence: msg.info.streamSequence,
      streamStoredMs: storedMs,
      redelivered: again,
    };
    this.broker.deliver(session, delivery);
    // A member subscribed at QoS 0 gets it at most once: sent (or not), it is done.
    if (delivery.qos === 0) msg.ack();
  }

  /**
   * QoS 2's acknowledgement waits for the stream's confirmation (its PUBREL goes out after it): the
   * client completes the message only once no node can get it again. QoS 1's is sent and forgotten.
   */
  private async acknowledge(msg: JsMsg, qos: number, cursor: ConsumerCursor): Promise<boolean> {
    cursor.acknowledged(msg.info.streamSequence, storedMsOf(msg));
    if (qos < 2) {
      msg.ack();
      return true;
    }
    return msg.ackAck({ timeout: ACK_CONFIRM_MS }).catch((err: Error) => {
      this.log.warn({ err: err.message }, 'mqtt: the stream did not confirm a QoS 2 acknowledgement');
      return false;
    });
  }

  /**
   * A delivery done (its client's PUBACK or PUBREC): acknowledged. A QoS 2 receipt whose acknowledgement
   * the stream did not confirm stays in the session's record until it is (`Session.unconfirmed`): the
   * stream gives the message again, maybe on another node, which must know the client has it.
   */
  private async settled(session: Session, msg: JsMsg, qos: number, cursor: ConsumerCursor): Promise<void> {
    const confirmed = await this.acknowledge(msg, qos, cursor);
    if (qos < 2) return;
    const sequence = msg.info.streamSequence;
    if (confirmed) return session.confirmed(sequence);
    session.unconfirmed(sequence);
    this.broker.directory?.changed(session, session.will);
  }

  /** A QoS 2 message its client received, acknowledged once the session's record holds that. */
  private async acknowledgeRecorded(session: Session, msg: JsMsg, cursor: ConsumerCursor): Promise<void> {
    const directory = this.broker.directory;
    directory?.changed(session, session.will);
    const outcome = (await directory?.persisted(session)) ?? 'written';
    if (outcome === 'written' && (await this.acknowledge(msg, 2, cursor)))
      session.confirmed(msg.info.streamSequence);
  }

  private cursorOf(feed: Feed, durable: string): ConsumerCursor {
    let cursor = feed.cursors.get(durable);
    if (cursor === undefined) feed.cursors.set(durable, (cursor = new ConsumerCursor()));
    return cursor;
  }

  stopFeed(feed: Feed): void {
    for (const messages of feed.consuming) messages.stop();
    feed.consuming = [];
  }
}
