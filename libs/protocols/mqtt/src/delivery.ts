import { type MqttMessage } from './message.js';
import { type Delivery } from './session.js';
import { type Subscription } from './subscription.js';

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
