import { type QoS } from 'mqtt-packet';
import { type MqttMessage } from './message.js';
import { type Subscription } from './subscription.js';

/** A message on its way to one subscriber, with what its subscriptions made of it. */
export interface Delivery {
  readonly message: MqttMessage;
  readonly qos: QoS;
  readonly retain: boolean;
  readonly subscriptionIds: readonly number[];
  /**
   * Encodings shared by the deliveries of one routed message, so a fan-out encodes an identical
   * QoS 0 PUBLISH once per protocol version instead of once per subscriber.
   */
  readonly encodings?: Map<string, Buffer>;
  /**
   * Cluster mode, a delivery from the stream: called with true once it is done (acknowledged, or given
   * up by policy) and with false to hand it back for redelivery.
   */
  readonly settle?: Settle;
  /** The stream delivered it before: it goes out with DUP set. */
  readonly redelivered?: boolean;
  /**
   * The packet id it should go out with, when free on the session: a stream delivery's is derived from
   * its stream sequence, so that any node sending it again uses the id the client knows it by.
   */
  readonly packetId?: number;
  /** Cluster mode: its sequence in the message stream. */
  readonly streamSequence?: number;
  /** Cluster mode: when the stream stored it (the server's clock, ms); with the sequence, it names the message. */
  readonly streamStoredMs?: number;
}

/**
 * Called with true once a delivery is done, false to hand it back. A stream delivery's settle(true)
 * resolves once the stream confirmed it let go of the message (or could not say).
 */
export type Settle = (done: boolean) => void | Promise<void>;

/** A QoS 1/2 delivery holding a packet id until the client completes it. */
export interface InFlight extends Delivery {
  readonly packetId: number;
  readonly settle: Settle | undefined;
  /**
   * 'pubrel' once a QoS 2 delivery got its PUBREC and its PUBREL may go; 'pubrec' before, in cluster
   * mode, while the PUBREL waits until the session record holds the stage.
   */
  state: 'publish' | 'pubrec' | 'pubrel';
}

/** Shared by the deliveries of subscriptions without identifiers (nearly all): never written to. */
const NO_SUBSCRIPTION_IDS: readonly number[] = Object.freeze([]);

/**
 * One delivery per client: the highest granted QoS, every subscription id, retain as the rules say.
 * Every Delivery has the same fields in the same order, so the hot paths that read and copy them stay
 * monomorphic.
 */
export function deliveryFor(
  message: MqttMessage,
  subs: readonly Subscription[],
  fromRetained: boolean,
  /** Shared by the QoS 0 deliveries of one routed message; a queued QoS 1/2 delivery must not keep them alive. */
  encodings?: Map<string, Buffer>,
): Delivery {
  let qos = 0;
  let keepRetain = fromRetained;
  let subscriptionIds: readonly number[] = NO_SUBSCRIPTION_IDS;
  for (const sub of subs) {
    qos = Math.max(qos, Math.min(sub.qos, message.qos));
    if (sub.retainAsPublished) keepRetain = true;
    if (sub.subscriptionId !== null) subscriptionIds = [...subscriptionIds, sub.subscriptionId];
  }
  return {
    message,
    qos: qos as Delivery['qos'],
    retain: message.retain && keepRetain,
    subscriptionIds,
    encodings: qos === 0 ? encodings : undefined,
  };
}
