import { type MqttMessage } from './message.js';
import { type Session } from './mqtt-session.js';
import { type Subscription } from './subscription.js';

/**
 * Where the QoS 1/2 messages of persistent sessions wait in a cluster (absent on a single node, where a
 * session's own queue does): a stream every node writes to and reads from. The core asks it to store
 * what a client publishes before acknowledging it, and tells it what its sessions do; deliveries it
 * makes carry a `settle` the core calls on the client's PUBACK (PUBREC for QoS 2).
 */
export interface MessageQueues {
  /** Whether a stream consumer anywhere reads `topic`: only then is a QoS 1/2 message on it stored. */
  wants(topic: string): boolean;
  /**
   * Whether this subscription gets the stored QoS 1/2 `message` from the stream (so routing skips it):
   * true once its consumers are read, and while they are being opened (the message then waits until it
   * is known whether they held it already).
   */
  takes(clientId: string, subscription: Subscription, message: MqttMessage): boolean;
  /** Resolves once the stream holds the message (one that `wants` its topic); rejects when it could not store it. */
  store(message: MqttMessage): Promise<void>;
  subscribed(session: Session, subscription: Subscription): void;
  /** Resolves once the subscription's stream consumers exist (or could not be made); at once without any. */
  opened(clientId: string, subscription: Subscription): Promise<void>;
  unsubscribed(session: Session, subscription: Subscription): void;
  /** The session's client is connected here (after CONNACK): its stream deliveries start. */
  attached(session: Session): void;
  /** Its connection ended: deliveries stop, and what was in flight goes back to the stream. */
  detached(session: Session): void;
  /** The session ended here; `handedOver`: it goes on at another node, which reads the same stream. */
  ended(session: Session, handedOver: boolean): void;
  /**
   * A session that no node holds ended (a dead node's, expired or taken with a clean start): what the
   * stream keeps for its subscriptions goes.
   */
  discard(clientId: string, subscriptions: readonly Subscription[]): void;
  /**
   * How many QoS 1/2 messages the stream holds for the session's own subscriptions (not yet delivered,
   * or delivered and not acknowledged), for an operator; null when the stream did not say.
   */
  waiting(session: Session): Promise<number | null>;
}
