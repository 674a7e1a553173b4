import { type Clock, type TimerHandle } from '#broker/kit';
import { type Delivery, type InFlight } from './delivery.js';
import { DeliveryQueue } from './delivery-queue.js';
import { type MqttMessage } from './message.js';
import { MAX_CARRIED, type WillRecord } from './session-state.js';
import { type Subscription } from './subscription.js';

/** The message of a QoS 2 delivery that came from another node in its PUBREL stage: only its id is left. */
const RELEASED: MqttMessage = {
  topic: '',
  payload: Buffer.alloc(0),
  qos: 2,
  retain: false,
  publisherId: null,
  expiresAt: null,
  properties: {},
};

/** How many received QoS 2 stream messages a session remembers (`Session.received`). */
const RECEIVED_REMEMBERED = 1024;

/** How many received QoS 2 stream messages whose acknowledgement is not confirmed a session keeps apart. */
const UNCONFIRMED_KEPT = 256;

/** A QoS 2 delivery another node took to its PUBREL stage: this node sends the PUBREL (4.3.3, 4.4). */
export function releaseOnly(packetId: number): InFlight {
  return {
    message: RELEASED,
    qos: 2,
    retain: false,
    subscriptionIds: [],
    packetId,
    settle: undefined,
    state: 'pubrel',
  };
}

/** What a session's network connection must provide to it. */
export interface SessionOwner {
  /** Sends a QoS 0 delivery or a new or redelivered in-flight one; false when it was dropped (too large). */
  sendPublish(delivery: Delivery | InFlight, dup: boolean): boolean;
  sendPubrel(packetId: number): void;
  /** How many QoS 1/2 deliveries the client accepts at once. */
  readonly sendWindow: number;
  /** Another connection took this client id (v5 DISCONNECT 0x8E). */
  takeOver(): void;
  /** This node can no longer prove it holds the session (v5 DISCONNECT 0x9C: use another server). */
  useAnotherServer(): void;
  /** An administrator discarded the session (v5 DISCONNECT 0x98: administrative action). */
  discarded(): void;
}

/**
 * The state of a client id that outlives a network connection (MQTT section 4.1): subscriptions,
 * deliveries in flight both ways, and the queue of QoS 1/2 messages waiting for a free packet id
 * or for the client to come back.
 */
export class Session {
  // Each table is made on first use: an idle session (most of a big broker's) holds none. An empty
  // Map costs about 190 bytes of heap, and there are four of them per session.
  private subscriptionTable: Map<string, Subscription> | null = null;
  private inflightTable: Map<number, InFlight> | null = null;
  private deliveryQueue: DeliveryQueue | null = null;
  private releaseSet: Set<number> | null = null;
  private receivedTable: Map<number, number> | null = null;
  /** Received stream sequences whose acknowledgement the stream did not confirm (`unconfirmed`). */
  private unconfirmedSet: Set<number> | null = null;
  /** Cluster mode: per stream consumer, the highest sequence given to this session (`delivered`). */
  streamDelivered: Map<string, number> | null = null;
  /**
   * Cluster mode: when (Date.now()) a stream message was last written to this session's connection, so a
   * node that finds the session's record moved can tell whether it sent one after the move.
   */
  streamSentAtMs = 0;
  owner: SessionOwner | null = null;
  /** Seconds the session lives after its connection ends; 0: it ends with the connection. */
  expirySec = 0;
  expiryTimer: TimerHandle | null = null;
  willTimer: TimerHandle | null = null;
  /** Publishes the will of the last connection once its delay is over or the session ends first. */
  pendingWill: (() => void) | null = null;
  /** Cluster mode: the will the directory keeps for this session (the connection's, or one still waiting). */
  will: WillRecord | null = null;
  /** The last packet id given out (a session from another node starts past that node's). */
  lastPacketId = 0;

  constructor(readonly clientId: string) {}

  get subscriptions(): Map<string, Subscription> {
    return (this.subscriptionTable ??= new Map());
  }

  get inflight(): Map<number, InFlight> {
    return (this.inflightTable ??= new Map());
  }

  get queue(): DeliveryQueue {
    return (this.deliveryQueue ??= new DeliveryQueue());
  }

  /** Deliveries queued; reading it does not make the queue. */
  get queuedCount(): number {
    return this.deliveryQueue?.length ?? 0;
  }

  /** Deliveries in flight; reading it does not make the table. */
  get inflightCount(): number {
    return this.inflightTable?.size ?? 0;
  }

  /** QoS 2 packet ids received and not yet released (PUBREL), so a resent PUBLISH is not routed twice. */
  get awaitingRelease(): Set<number> {
    return (this.releaseSet ??= new Set());
  }

  /**
   * Cluster mode: the QoS 2 stream messages this session's client has received (its PUBREC came), the
   * newest `RECEIVED_REMEMBERED`: by stream sequence, or by packet id (negative) for those received on
   * the node the session came from; with when the stream stored it (`storedMs`, 0 if not known). The
   * stream may deliver one again (its acknowledgement lost with a node): the client has it, and must not
   * get it twice.
   */
  received(streamSequence: number | undefined, packetId: number, storedMs = 0): void {
    const table = (this.receivedTable ??= new Map());
    const key = streamSequence ?? -packetId;
    table.delete(key);
    table.set(key, storedMs);
    if (table.size <= RECEIVED_REMEMBERED) return;
    // The oldest goes, unless its acknowledgement is not confirmed yet: that one is kept apart.
    for (const oldest of table.keys()) {
      if (this.unconfirmedSet?.has(oldest) === true) continue;
      table.delete(oldest);
      return;
    }
  }

  /**
   * The stream did not confirm the acknowledgement of a received QoS 2 message (NATS away): it may give
   * the message again long after, when newer receipts have pushed this one out of what a record
   * carries. Until it is `confirmed`, its receipt is kept and handed over whatever came since (the
   * oldest `UNCONFIRMED_KEPT` ones first let go). Nothing for a sequence the client has not received.
   */
  unconfirmed(streamSequence: number): void {
    if (this.receivedTable?.has(streamSequence) !== true) return;
    const kept = (this.unconfirmedSet ??= new Set());
    kept.add(streamSequence);
    if (kept.size > UNCONFIRMED_KEPT) kept.delete(kept.values().next().value as number);
  }

  /** The stream confirmed the acknowledgement of a received QoS 2 message: no node can get it again. */
  confirmed(streamSequence: number): void {
    this.unconfirmedSet?.delete(streamSequence);
  }

  /** The received sequences whose acknowledgement is not confirmed, oldest first. */
  unconfirmedSequences(): number[] {
    return [...(this.unconfirmedSet ?? [])];
  }

  /**
   * The newest `limit` QoS 2 stream messages the client received, and those whose acknowledgement the
   * stream has not confirmed, each its sequence and when the stream stored it (not those known by
   * packet id); at most `MAX_CARRIED`, the newest kept.
   */
  receivedSequences(limit: number): [number, number][] {
    const received = [...(this.receivedTable ?? [])].filter(([key]) => key > 0);
    const newest = Math.max(0, received.length - limit);
    const unconfirmed = this.unconfirmedSet;
    if (unconfirmed === null || unconfirmed.size === 0) return received.slice(newest);
    const handed = received.filter(([key], i) => i >= newest || unconfirmed.has(key));
    return handed.slice(Math.max(0, handed.length - MAX_CARRIED));
  }

  /** Cluster mode: stream consumer `durable` gave this session `sequence` (here, or where it came from). */
  delivered(durable: string, sequence: number): void {
    const table = (this.streamDelivered ??= new Map());
    const known = table.get(durable);
    if (known !== undefined && known >= sequence) return;
    // Moved to the end (newest), and the table bounded as its record is: every record write carries it.
    table.delete(durable);
    table.set(durable, sequence);
    if (table.size > MAX_CARRIED) table.delete(table.keys().next().value as string);
  }

  /**
   * Whether a QoS 2 stream message (its sequence, its derived packet id, when the stream stored it) is
   * one the client received. The sequence alone does not name a message: a nats-server that lost writes
   * it had acknowledged gives their sequences to new messages, stored later.
   */
  hasReceived(streamSequence: number, packetId: number, storedMs: number): boolean {
    const table = this.receivedTable;
    if (table === null) return false;
    const at = table.get(streamSequence);
    return (at !== undefined && (at === 0 || at === storedMs)) || table.has(-packetId);
  }

  /** Drops the subscriptions and the queued deliveries, returning the subscriptions; makes neither table. */
  discard(): Subscription[] {
    const subscriptions = this.subscriptionTable === null ? [] : [...this.subscriptionTable.values()];
    this.subscriptionTable = null;
    this.deliveryQueue = null;
    return subscriptions;
  }

  /**
   * The next packet id not in flight. Callers keep fewer than 65535 deliveries in flight (the send
   * window is at most that), so one is always free.
   */
  nextPacketId(): number {
    do this.lastPacketId = (this.lastPacketId % 65535) + 1;
    while (this.inflight.has(this.lastPacketId));
    return this.lastPacketId;
  }

  /**
   * Packet ids of QoS 2 deliveries in their PUBREL stage (PUBREC received, PUBCOMP not yet), their PUBREL
   * sent or waiting for the record that says so ('pubrec').
   */
  releasing(): number[] {
    if (this.inflightTable === null) return [];
    const ids: number[] = [];
    for (const inflight of this.inflightTable.values())
      if (inflight.state !== 'publish') ids.push(inflight.packetId);
    return ids;
  }

  clearTimers(clock: Clock): void {
    if (this.expiryTimer !== null) clock.cancel(this.expiryTimer);
    this.expiryTimer = null;
    if (this.willTimer !== null) clock.cancel(this.willTimer);
    this.willTimer = null;
    this.pendingWill = null;
  }
}
