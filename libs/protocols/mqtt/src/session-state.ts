import { type MqttMessage } from './message.js';
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
  /** When the stream stored each of `streamReceived` (ms; 0 not known), which names it with the sequence. */
  readonly streamReceivedAt?: readonly number[];
  /**
   * Those of `streamReceived` whose acknowledgement the stream did not confirm: carried on, whatever is
   * received after them, until the stream gives them again and their acknowledgement is confirmed.
   */
  readonly streamUnconfirmed?: readonly number[];
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

/** At most this many consumers' sequences, and received sequences, are taken from a record. */
export const MAX_CARRIED = 512;
