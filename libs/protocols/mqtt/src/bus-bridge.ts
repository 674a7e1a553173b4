import { type BusMessage, type BusReach, type BusSubscription, type TopicBus } from '#broker/bus';
import { type MqttBroker } from './mqtt-broker.js';
import { type MqttMessage } from './message.js';

/** The reach of a bus message no MQTT client got: one object, not one per message (every publish echoes). */
const NOBODY: BusReach = Object.freeze({ reached: 0 });

/** The name the bridge publishes under, and skips when the bus hands its own messages back. */
export const BUS_ORIGIN = 'mqtt';

/**
 * MQTT's bits in a bus message's `flags`: the QoS its publisher gave (another node's bridge routes by
 * it: a cluster delivers QoS 1/2 to persistent sessions through the stream instead), and whether its
 * node stored it in the stream. The same bits the cluster's envelope carried before `flags` was generic.
 */
const QOS_BITS = 0x03;
const STORED = 0x10;

function flagsOf(message: MqttMessage): number {
  return message.stored === true ? message.qos | STORED : message.qos;
}

/**
 * Topics map one to one: MQTT topic `a/b` is bus topic `a/b`. Every message an MQTT client (or a
 * will) publishes goes to the bus with its content type; every bus message from another module
 * reaches matching MQTT subscribers as a QoS 0 (another node's MQTT message: its own QoS), non-retained publish with the same topic, payload
 * and content type. `$`-topics are not bridged in either direction. In a cluster the bridge hears every
 * message of its own node and, from the others, only the topics its clients' filters attract.
 */
export function bridgeBus(broker: MqttBroker, bus: TopicBus): BusSubscription {
  broker.hooks.published = (message, principal) => {
    if (message.topic.startsWith('$')) return;
    bus.publish({
      topic: message.topic,
      payload: message.payload,
      ...(message.properties.contentType === undefined
        ? {}
        : { contentType: message.properties.contentType }),
      origin: BUS_ORIGIN,
      principal,
      flags: flagsOf(message),
      // Only while a trace follows its publisher: another node's trace then sees where it is delivered.
      ...(broker.traces.active &&
      message.publisherId !== null &&
      broker.traces.followsClient(message.publisherId)
        ? { sender: message.publisherId }
        : {}),
    });
  };
  // Other nodes send this node only the topics its MQTT clients subscribed to.
  const attracted = new Map<string, BusSubscription>();
  const attract = (filter: string, present: boolean): void => {
    if (!present) {
      attracted.get(filter)?.unsubscribe();
      attracted.delete(filter);
    } else if (!filter.startsWith('$')) {
      attracted.set(filter, bus.attract(filter));
    }
  };
  for (const filter of broker.subscriptions.filters()) attract(filter, true);
  broker.subscriptions.onFilter = attract;
  const subscription = bus.subscribe(
    '#',
    (message) => {
      // Our own echo; the same origin from another node is MQTT traffic of that node's clients.
      if (message.origin === BUS_ORIGIN && message.node === undefined) return NOBODY;
      // Nobody subscribed over MQTT: the payload, which a publisher may build only when read, is left alone.
      const subscribers = broker.subscribersOf(message.topic);
      if (subscribers.length === 0) return NOBODY;
      return { reached: broker.routeTo(subscribers, fromBus(message)) };
    },
    { reach: 'node' },
  );
  return {
    unsubscribe: () => {
      subscription.unsubscribe();
      broker.subscriptions.onFilter = null;
      for (const attraction of attracted.values()) attraction.unsubscribe();
      attracted.clear();
    },
  };
}

/**
 * A bus message as MQTT delivers it: not retained; another node's MQTT message keeps its QoS, and its
 * publisher's client id when that node gave it (while a trace follows that client).
 */
export function fromBus(message: BusMessage): MqttMessage {
  // Another module's flags and sender are its own: to MQTT its messages are QoS 0, not stored, from no client.
  const mqtt = message.origin === BUS_ORIGIN;
  const flags = mqtt ? (message.flags ?? 0) : 0;
  const qos = flags & QOS_BITS;
  return {
    topic: message.topic,
    payload: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
    // Another node's MQTT message keeps its QoS: a subscription fed by the stream is not sent it twice.
    qos: qos === 1 || qos === 2 ? qos : 0,
    retain: false,
    publisherId: mqtt ? (message.sender ?? null) : null,
    expiresAt: null,
    properties: message.contentType === undefined ? {} : { contentType: message.contentType },
    ...((flags & STORED) !== 0 ? { stored: true } : {}),
  };
}
