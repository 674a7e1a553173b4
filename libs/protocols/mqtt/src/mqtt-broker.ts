import { type TopicAuthorizer } from '#broker/auth';
import { type MqttConfig } from './mqtt-config.js';
import { type Clock, systemClock } from '#broker/kit';
import { BrokerStats } from './broker-stats.js';
import { isExpired, type MqttMessage } from './message.js';
import { RetainedStore } from './retained-store.js';
import { type Delivery, type InFlight } from './delivery.js';
import { type Session, type SessionOwner } from './mqtt-session.js';
import { type MessageQueues } from './message-queues.js';
import { deliveryFor } from './delivery.js';
import { type SessionDirectory } from './session-directory.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { type Subscription, type SubscriptionMatch } from './subscription.js';
import { SubscriptionStore } from './subscription-store.js';
import { deliveryRecord, pubrelRecord } from './trace-records.js';
import { TraceTaps } from './trace-taps.js';
import { TopicRates } from './topic-rates.js';

export interface BrokerHooks {
  /** Every message a client (or a will) published, for the bus bridge. */
  published?(message: MqttMessage, principal: string | null): void;
  /** A message was dropped (full queue, full retained store): for the log. */
  dropped?(why: string, clientId: string | null, topic: string): void;
  /**
   * A client's retained message was stored (or, with an empty payload, cleared): for the cluster, which
   * settles with null once it holds the change, or with why it does not. `held`: whether this node held
   * a retained message on the topic before.
   */
  retained?(message: MqttMessage, held: boolean): Promise<Error | null>;
  /** A shared group's members on this filter, or their connections, changed here: for the cluster. */
  shared?(group: string, filter: string): void;
}

/** What became of a published message. */
export interface Published {
  /** How many sessions got it. */
  readonly reached: number;
  /** A retained change in a cluster: settles with null once the cluster holds it, or with why it does not. */
  readonly shared: Promise<Error | null> | null;
}

/**
 * The broker state shared by every connection, WebSocket or TCP: sessions by client id, the
 * subscription trie, retained messages and statistics. Sans-IO: connections plug in through
 * Session.owner, and nothing here touches a socket.
 */
export class MqttBroker {
  readonly sessions = new Map<string, Session>();
  readonly subscriptions = new SubscriptionStore();
  readonly retained: RetainedStore;
  readonly stats: BrokerStats;
  readonly lifecycle: SessionLifecycle;
  /** The dashboard's traces of clients and topic filters: every packet path asks `traces.active` first. */
  readonly traces = new TraceTaps();
  /** The busiest topics clients publish to on this node, for the dashboard (a bounded count). */
  readonly topicRates: TopicRates;
  hooks: BrokerHooks = {};
  /** Cluster mode: one owner per client id across the nodes. */
  directory: SessionDirectory | null = null;
  /**
   * Sessions whose next queued delivery is the stream's and waits for the directory to verify this
   * node's sessions (`heldBack`); only stream deliveries wait, the bus's go on.
   */
  private held: Set<Session> | null = null;
  /** Cluster mode: QoS 1/2 messages for persistent sessions through a stream. */
  queues: MessageQueues | null = null;

  constructor(
    readonly config: MqttConfig,
    /** Whether a client may publish, subscribe and read (scopes and `authorization` rules). */
    readonly authorizer: TopicAuthorizer,
    readonly clock: Clock = systemClock,
  ) {
    this.retained = new RetainedStore(config.maxRetainedMessages, config.maxRetainedBytes);
    this.stats = new BrokerStats(clock.now());
    this.topicRates = new TopicRates(clock);
    this.lifecycle = new SessionLifecycle(this);
  }

  get connectedCount(): number {
    let count = 0;
    for (const session of this.sessions.values()) if (session.owner !== null) count++;
    return count;
  }

  /** Live counts for the dashboard, in one pass over the sessions. */
  figures(): {
    sessions: number;
    connected: number;
    subscriptions: number;
    retained: number;
    queued: number;
  } {
    let connected = 0;
    let queued = 0;
    for (const session of this.sessions.values()) {
      if (session.owner !== null) connected++;
      queued += session.queuedCount;
    }
    const { size: sessions } = this.sessions;
    return {
      sessions,
      connected,
      subscriptions: this.subscriptions.size,
      retained: this.retained.size,
      queued,
    };
  }

  /** Routes a message to every matching subscriber, and keeps it when it is retained. */
  publish(message: MqttMessage, publisher: { principal: string | null; bridge: boolean }): Published {
    this.stats.publishReceived++;
    const shared = message.retain ? this.retain(message) : null;
    if (publisher.bridge) this.hooks.published?.(message, publisher.principal);
    return { reached: this.route(message), shared };
  }

  /** Stores a retained message here, and hands a change to the cluster (whose outcome it returns). */
  private retain(message: MqttMessage): Promise<Error | null> | null {
    const held = this.retained.get(message.topic) !== undefined;
    if (!this.retained.store(message, this.clock.now())) {
      this.hooks.dropped?.('retained store full', message.publisherId, message.topic);
      return null;
    }
    // A clear of a topic held nothing for here still goes to the cluster, which may hold one.
    return this.hooks.retained?.(message, held) ?? null;
  }

  /**
   * A will: routed like a client's publish, and in a cluster stored in the stream too when it is QoS 1/2,
   * so persistent sessions on any node get it (nobody waits for its acknowledgement).
   */
  publishWill(message: MqttMessage, principal: string | null): void {
    const queues = this.queues;
    if (message.qos === 0 || queues === null || !queues.wants(message.topic)) {
      this.publish(message, { principal, bridge: true });
      return;
    }
    const stored = { ...message, stored: true };
    this.publish(stored, { principal, bridge: true });
    queues
      .store(stored)
      .catch(() => this.hooks.dropped?.('will not stored in the stream', message.publisherId, message.topic));
  }

  route(message: MqttMessage): number {
    return this.routeTo(this.subscribersOf(message.topic), message);
  }

  /** The subscriptions a message on `topic` would reach now; empty when nobody would get it. */
  subscribersOf(topic: string): readonly SubscriptionMatch[] {
    return this.subscriptions.match(topic, (id) => (this.sessions.get(id)?.owner ?? null) !== null);
  }

  /** Routes a message to the subscriptions `subscribersOf(message.topic)` found. */
  routeTo(matches: readonly SubscriptionMatch[], message: MqttMessage): number {
    if (matches.length === 1) return this.routeToOne(matches[0] as SubscriptionMatch, message);
    const byClient = new Map<string, Subscription[]>();
    const queues = message.qos > 0 && message.stored === true ? this.queues : null;
    let streamFed = 0;
    for (const { clientId, subscription } of matches) {
      if (subscription.noLocal && clientId === message.publisherId) continue;
      // A subscription fed by the stream gets its QoS 1/2 messages from there, not twice (it still counts).
      if (queues !== null && queues.takes(clientId, subscription, message)) {
        streamFed++;
        continue;
      }
      const list = byClient.get(clientId);
      if (list === undefined) byClient.set(clientId, [subscription]);
      else list.push(subscription);
    }
    let delivered = 0;
    const encodings = new Map<string, Buffer>();
    for (const [clientId, subs] of byClient) {
      const session = this.sessions.get(clientId);
      if (session === undefined) continue;
      this.deliver(session, deliveryFor(message, subs, false, encodings));
      delivered++;
    }
    return delivered + streamFed;
  }

  /** The common fan-in case, one matching subscription: nothing to group, no encoding to share. */
  private routeToOne({ clientId, subscription }: SubscriptionMatch, message: MqttMessage): number {
    if (subscription.noLocal && clientId === message.publisherId) return 0;
    if (message.stored === true && this.queues !== null && this.queues.takes(clientId, subscription, message))
      return 1;
    const session = this.sessions.get(clientId);
    if (session === undefined) return 0;
    this.deliver(session, deliveryFor(message, [subscription], false));
    return 1;
  }

  /**
   * Sends now when the client is connected and has room in its window, else queues QoS 1/2 within
   * `maxQueuedMessages` and `maxQueuedBytes`, dropping the oldest queued messages to make room.
   * QoS 0 is never queued.
   */
  deliver(session: Session, delivery: Delivery): void {
    const owner = session.owner;
    if (delivery.qos === 0) {
      const sent = owner !== null && owner.sendPublish(delivery, false);
      if (sent) this.stats.publishSent++;
      if (this.traces.active) this.traceDelivery(session, delivery, null, sent, owner === null);
      return;
    }
    if (owner !== null && session.queuedCount === 0 && session.inflightCount < owner.sendWindow) {
      return this.launch(session, owner, delivery);
    }
    const { maxQueuedMessages, maxQueuedBytes } = this.config;
    const dropped = session.queue.push(delivery, maxQueuedMessages, maxQueuedBytes);
    if (this.traces.active) this.traceQueued(session, delivery, dropped);
    for (const out of dropped) {
      this.stats.publishDropped++;
      // A stream delivery dropped here goes back to the stream: it was acknowledged to its publisher.
      out.settle?.(false);
      this.hooks.dropped?.('session queue full', session.clientId, out.message.topic);
    }
    this.pump(session);
  }

  /**
   * Moves queued deliveries into flight while the client has room; a stream delivery, while the
   * directory checks what this node holds (after a stall or a NATS outage), once that check is done.
   */
  pump(session: Session): void {
    const owner = session.owner;
    if (owner === null) return;
    const now = this.clock.now();
    while (session.queuedCount > 0 && session.inflightCount < owner.sendWindow) {
      if (session.queue.peek()?.streamSequence !== undefined && this.heldBack(session)) return;
      const delivery = session.queue.shift() as Delivery;
      if (!isExpired(delivery.message, now)) this.launch(session, owner, delivery);
      else {
        delivery.settle?.(true);
        if (this.traces.active) this.traceExpired(session, delivery);
      }
    }
  }

  /**
   * True while the directory has not verified this node's sessions: a client's PUBACK read meanwhile
   * must not send it what the stream queued for a session that may have moved (the stream gives it to
   * the session's new node too). Pumps it once verified.
   */
  private heldBack(session: Session): boolean {
    if (this.held !== null) {
      this.held.add(session);
      return true;
    }
    const verified = this.directory?.verified() ?? null;
    if (verified === null) return false;
    const held = new Set([session]);
    this.held = held;
    void verified.then(() => {
      this.held = null;
      for (const waiting of held) this.pump(waiting);
    });
    return true;
  }

  private launch(session: Session, owner: SessionOwner, delivery: Delivery): void {
    const wanted = delivery.packetId;
    const holding = wanted === undefined ? undefined : session.inflight.get(wanted);
    // The stream handed this message again while its copy is in flight here (the new node's return of
    // its predecessor's deliveries raced the first one): the copy in flight settles it, as JetStream
    // acknowledges by stream sequence. Sent again it would reach a QoS 2 client twice, under a new id.
    // (The same sequence stored at another time is another message: see `Session.hasReceived`.)
    const sequence = delivery.streamSequence;
    if (
      sequence !== undefined &&
      holding?.streamSequence === sequence &&
      holding.streamStoredMs === delivery.streamStoredMs
    )
      return;
    // Or it waited in the queue behind its first copy, which the client has received meanwhile (PUBREC):
    // done, not sent again under a new id.
    if (
      sequence !== undefined &&
      delivery.qos === 2 &&
      wanted !== undefined &&
      session.hasReceived(sequence, wanted, delivery.streamStoredMs ?? 0)
    ) {
      delivery.settle?.(true);
      return;
    }
    const packetId = wanted !== undefined && holding === undefined ? wanted : session.nextPacketId();
    // Built field by field, not spread: a spread of this object was a fifth of a QoS 1 fan-in's time.
    const inflight: InFlight = {
      message: delivery.message,
      qos: delivery.qos,
      retain: delivery.retain,
      subscriptionIds: delivery.subscriptionIds,
      encodings: undefined,
      packetId,
      state: 'publish',
      settle: delivery.settle,
      streamSequence: delivery.streamSequence,
      streamStoredMs: delivery.streamStoredMs,
    };
    session.inflight.set(packetId, inflight);
    // A publish too large for the client is discarded as if delivered (v5 3.1.2.11.4).
    const sent = owner.sendPublish(inflight, delivery.redelivered === true);
    if (sent) this.stats.publishSent++;
    else {
      session.inflight.delete(packetId);
      delivery.settle?.(true);
    }
    if (this.traces.active) this.traceDelivery(session, delivery, packetId, sent, false);
  }

  /** A delivery queued (or not, the queue being full), and the queued ones it pushed out. */
  private traceQueued(session: Session, delivery: Delivery, dropped: readonly Delivery[]): void {
    const { clientId } = session;
    if (!dropped.includes(delivery)) {
      const why = session.owner === null ? 'not connected' : 'client window full';
      this.traces.message(
        deliveryRecord(clientId, delivery, null, 'queued', why),
        delivery.message.publisherId,
      );
    }
    for (const out of dropped) {
      this.traces.message(
        deliveryRecord(clientId, out, null, 'dropped', 'session queue full'),
        out.message.publisherId,
      );
    }
  }

  /** A delivery sent, or not sent to a client that is away or would not take it. */
  private traceDelivery(
    session: Session,
    delivery: Delivery,
    packetId: number | null,
    sent: boolean,
    away: boolean,
  ): void {
    const why = sent ? null : away ? 'not connected' : 'not sent (slow, too large for it, or not authorized)';
    const record = deliveryRecord(session.clientId, delivery, packetId, sent ? 'sent' : 'dropped', why);
    this.traces.message(record, delivery.message.publisherId);
  }

  /** A queued delivery whose message expired (v5 message expiry interval) before it could be sent. */
  private traceExpired(session: Session, delivery: Delivery): void {
    const why = 'message expiry interval passed while queued';
    const record = deliveryRecord(session.clientId, delivery, null, 'expired', why);
    this.traces.message(record, delivery.message.publisherId);
  }

  /** A delivery in flight when its client went away, sent again with DUP set at its reconnect (or not). */
  private traceResent(session: Session, inflight: InFlight, sent: boolean): void {
    const { publisherId } = inflight.message;
    const from = publisherId === null ? '' : `, from ${publisherId}`;
    const why = sent
      ? `DUP, in flight when the client went away${from}`
      : 'not sent again (too large for it, or not authorized)';
    const record = deliveryRecord(
      session.clientId,
      inflight,
      inflight.packetId,
      sent ? 'resent' : 'dropped',
      why,
    );
    this.traces.message(record, inflight.message.publisherId);
  }

  /** Resends what was in flight when the client went away (DUP set), then the queue (4.4). */
  resume(session: Session): void {
    const owner = session.owner;
    if (owner === null) return;
    if (session.inflightCount > 0) {
      for (const inflight of session.inflight.values()) {
        // Its PUBREL waits for the record (handlePubrec), which goes to this connection once written.
        if (inflight.state === 'pubrec') continue;
        if (inflight.state === 'pubrel') {
          owner.sendPubrel(inflight.packetId);
          if (this.traces.active)
            this.traces.message(pubrelRecord(session.clientId, inflight), inflight.message.publisherId);
          continue;
        }
        const sent = owner.sendPublish(inflight, true);
        if (!sent) session.inflight.delete(inflight.packetId);
        if (this.traces.active) this.traceResent(session, inflight, sent);
      }
    }
    this.pump(session);
  }

  subscribe(session: Session, subscription: Subscription): void {
    // The same filter again (same raw text: same filter and group) replaces its member in place.
    // Removing it first would leave the filter without members for a moment, and the bus bridge would
    // detach its topics and attach them again: that churn was most of a re-SUBSCRIBE's cost.
    session.subscriptions.set(subscription.raw, subscription);
    this.subscriptions.add(session.clientId, subscription);
    // A SUBSCRIBE again to the same filter keeps what the stream holds for it (clients resubscribe on
    // every connect).
    this.queues?.subscribed(session, subscription);
    this.directory?.changed(session, session.will);
    if (subscription.group !== null) this.hooks.shared?.(subscription.group, subscription.filter);
  }

  unsubscribe(session: Session, raw: string): boolean {
    const subscription = session.subscriptions.get(raw);
    if (subscription === undefined) return false;
    session.subscriptions.delete(raw);
    this.subscriptions.remove(session.clientId, subscription);
    this.queues?.unsubscribed(session, subscription);
    this.directory?.changed(session, session.will);
    if (subscription.group !== null) this.hooks.shared?.(subscription.group, subscription.filter);
    return true;
  }

  /**
   * Cluster mode: resolves once what `session` just subscribed is where every node finds it (its stream
   * consumers and its session record), so that its SUBACK promises no more than is kept, as nats-server's
   * MQTT support does; null on a single node, where it is so at once.
   */
  subscriptionsKept(session: Session, subscriptions: readonly Subscription[]): Promise<void> | null {
    const { queues, directory } = this;
    if (queues === null && directory === null) return null;
    const pending = subscriptions.map((s) => queues?.opened(session.clientId, s));
    pending.push(directory?.persisted(session).then(() => undefined));
    return Promise.all(pending).then(() => undefined);
  }

  /** Its client connected (CONNACK sent) or went away: shared groups across the nodes follow who is here. */
  presenceChanged(session: Session): void {
    const shared = this.hooks.shared;
    if (shared === undefined || session.subscriptions.size === 0) return;
    for (const s of session.subscriptions.values()) if (s.group !== null) shared(s.group, s.filter);
  }

  /**
   * Forgets a session: its subscriptions leave the trie and its queue is discarded. `handedOver`: it goes
   * on at another node, so what the cluster keeps for it (its stream consumers) stays.
   */
  endSession(session: Session, handedOver = false): void {
    this.queues?.ended(session, handedOver);
    session.clearTimers(this.clock);
    for (const subscription of session.discard()) {
      this.subscriptions.remove(session.clientId, subscription);
      if (subscription.group !== null) this.hooks.shared?.(subscription.group, subscription.filter);
    }
    if (this.sessions.get(session.clientId) !== session) return;
    this.sessions.delete(session.clientId);
    this.directory?.ended(session);
  }
}
