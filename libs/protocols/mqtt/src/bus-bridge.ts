import { type BusSubscription, type TopicBus } from '#broker/bus';
import { type MqttBroker } from './broker.js';

/** The name the bridge publishes under, and skips when the bus hands its own messages back. */
export const BUS_ORIGIN = 'mqtt';

/**
 * Topics map one to one: MQTT topic `a/b` is bus topic `a/b`. Every message an MQTT client (or a
 * will) publishes goes to the bus with its content type; every bus message from another module
 * reaches matching MQTT subscribers as a QoS 0, non-retained publish with the same topic, payload
 * and content type. `$`-topics are not bridged in either direction.
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
    });
  };
  return bus.subscribe('#', (message) => {
    // Our own echo; the same origin from another node is MQTT traffic of that node's clients.
    if (message.origin === BUS_ORIGIN && message.node === undefined) return;
    // Nobody subscribed over MQTT: the payload, which a publisher may build only when read, is left alone.
    const subscribers = broker.subscribersOf(message.topic);
    if (subscribers.length === 0) return;
    broker.routeTo(subscribers, {
      topic: message.topic,
      payload: Buffer.from(message.payload.buffer, message.payload.byteOffset, message.payload.byteLength),
      qos: 0,
      retain: false,
      publisherId: null,
      expiresAt: null,
      properties: message.contentType === undefined ? {} : { contentType: message.contentType },
    });
  });
}
