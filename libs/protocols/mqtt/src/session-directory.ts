import { type MqttMessage } from './message.js';
import { type Session } from './session.js';
import { type Subscription } from './subscription.js';

/**
 * What moves with a session from one node to another: its expiry, its subscriptions, the packet ids
 * of its QoS 2 deliveries in their PUBREL stage (the stream's part of them is done, the client waits for
 * PUBREL: the next node sends it, 4.3.3), and those of the QoS 2 messages its client published that wait
 * for their PUBREL (routed already: a resend on the next node is acknowledged, not routed again).
 */
export interface SessionState {
  readonly expirySec: number;
  readonly subscriptions: readonly Subscription[];
  readonly releasing: readonly number[];
  readonly receiving: readonly number[];
  /**
   * The last packet id the session gave out: the next node continues past it (by `maxInflight`, as a
   * record may be that far behind), so a new message never takes an id the client may still hold.
   */
  readonly lastPacketId: number;
  /**
   * Per stream consumer, the highest sequence the session was given, and the newest QoS 2 stream
   * sequences its client received: a nats-server killed right after a delivery can forget it and hand
   * the message out again as new, and the next node must still know it for a repeat (DUP; QoS 2 not
   * sent again). In the takeover answer, a fenced session's record and every record write (a holder
   * paused or cut off answers no takeover: its record must know).
   */
  readonly streamDelivered?: Readonly<Record<string, number>>;
  readonly streamReceived?: readonly number[];
}

/** A session with nothing in it: what a clean start begins with. */
export const EMPTY_STATE: SessionState = {
  expirySec: 0,
  subscriptions: [],
  releasing: [],
  receiving: [],
  lastPacketId: 0,
};

/** A connection's will as the directory keeps it, so another node can publish it if this one dies. */
export interface WillRecord {
  readonly message: MqttMessage;
  readonly delaySec: number;
  /** The will's message expiry interval, or null. */
  readonly expirySec: number | null;
  readonly principal: string | null;
}

/**
 * The outcome of a claim: the state the session had elsewhere (null: none); 'lost' when another CONNECT
 * won the id; 'unavailable' when the directory could not be asked (NATS away).
 */
export type Claim = { readonly state: SessionState | null } | 'lost' | 'unavailable';

/**
 * Where the sessions of a cluster live (absent on a single node): one owner per client id across the
 * nodes. The core asks it before a connection takes a client id and tells it what changes; it never
 * waits on it otherwise.
 */
/** What became of a session's latest changes (`SessionDirectory.persisted`). */
export type Persisted = 'written' | 'failed' | 'moved';

export interface SessionDirectory {
  /**
   * Makes this node the owner of `clientId`: the node holding it lets go (its connection gets DISCONNECT
   * 0x8E; on a clean start its session ends and a waiting will goes out, else its state comes here).
   * 'lost' when a CONNECT for the same id on another node won the race. `keepAliveSec` is the
   * connection's: a node that adopts the session when this one seems dead waits 1.5 times it before it
   * counts the connection lost.
   */
  claim(
    clientId: string,
    clean: boolean,
    expirySec: number,
    will: WillRecord | null,
    keepAliveSec: number,
  ): Promise<Claim>;
  /** The connection that claimed `clientId` went away before taking it. */
  abandon(clientId: string): void;
  /** The session's subscriptions, expiry or will changed. */
  changed(session: Session, will: WillRecord | null): void;
  /**
   * Resolves once what changed of the session so far was written to its record, or its write failed:
   * 'written' when the record holds it, 'failed' when NATS did not take the write (the session is still
   * this node's), 'moved' once another node holds the record (or the session ended here).
   */
  persisted(session: Session): Promise<Persisted>;
  /** The session ended here (expired, clean start, or handed to another node). */
  ended(session: Session): void;
}
