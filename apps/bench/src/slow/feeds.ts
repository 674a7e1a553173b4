import mqttPacket from 'mqtt-packet';
import { connectionInit, subscribeMessage } from '../graphql/transport-ws-load.js';
import { connectPacket } from '../mqtt/mqtt-wire.js';

/**
 * One protocol's subscription feed as the slow-consumer benchmark drives it: how a subscriber
 * subscribes, how the publisher publishes, which metric counts what the broker shed.
 */
export interface Feed {
  readonly name: string;
  readonly path: string;
  readonly subprotocol: string;
  /** Sent by a subscriber, each answered by one message before the next. */
  readonly subscribe: (clientId: string) => readonly (string | Buffer)[];
  /** Sent by a subscriber after that, with no answer (a graphql-transport-ws subscribe). */
  readonly subscribeLast?: string;
  readonly setup: readonly (string | Buffer)[];
  publish(seq: number, payload: string): string | Buffer;
  /** Events in one message the subscriber got (an MQTT frame may hold several packets). */
  events(data: Buffer): number;
  /** What the reader must answer to each event (an MQTT PUBACK), if anything. */
  answer?(data: Buffer): Buffer | null;
  /** The /metrics lines that count what was shed for this feed. */
  readonly dropped: RegExp;
}

/** Each feed has topics of its own, so feeds running at once never hear each other (the bus joins them). */
function mqttFeed(qos: 0 | 1): Feed {
  const topic = `feeds/mqtt${qos}`;
  return {
    name: `MQTT QoS ${qos}`,
    path: '/mqtt',
    subprotocol: 'mqtt',
    subscribe: (clientId) => [
      connectPacket(clientId),
      mqttPacket.generate({ cmd: 'subscribe', messageId: 1, subscriptions: [{ topic, qos }] }),
    ],
    setup: [connectPacket(`publisher-mqtt${qos}`)],
    publish: (seq, payload) =>
      mqttPacket.generate({
        cmd: 'publish',
        topic,
        payload,
        qos,
        retain: false,
        dup: false,
        ...(qos === 1 && { messageId: (seq % 65_535) + 1 }),
      }),
    events: (data) => (data[0] !== undefined && data[0] >> 4 === 3 ? 1 : 0),
    answer:
      qos === 1
        ? (data) => {
            // A QoS 1 PUBLISH to us: its packet id follows the topic.
            if (data[0] === undefined || data[0] >> 4 !== 3) return null;
            let i = 1;
            while ((data[i] as number) & 0x80) i++;
            const topicLength = data.readUInt16BE(i + 1);
            const id = data.readUInt16BE(i + 3 + topicLength);
            return Buffer.from([0x40, 2, id >> 8, id & 0xff]);
          }
        : undefined,
    dropped: /^broker_mqtt_messages_dropped_total\{/,
  };
}

export const FEEDS: readonly Feed[] = [
  mqttFeed(0),
  mqttFeed(1),
  {
    name: 'GraphQL subscription',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    subscribe: () => [connectionInit()],
    subscribeLast: subscribeMessage('s', 'subscription { topic(filter: "feeds/graphql") { payload } }'),
    setup: [connectionInit()],
    publish: (seq, payload) =>
      subscribeMessage(
        `p${seq}`,
        'mutation P($payload: String!) { publish(topic: "feeds/graphql", payload: $payload) }',
        { payload },
      ),
    events: (data) => (data.includes('"type":"next","payload":{"data":{"topic"') ? 1 : 0),
    dropped: /^broker_messages_dropped_total\{endpoint="\/graphql"/,
  },
  {
    name: 'WAMP subscription',
    path: '/ws',
    subprotocol: 'wamp.2.json',
    subscribe: () => [
      JSON.stringify([1, 'realm1', { roles: { subscriber: {} } }]),
      JSON.stringify([32, 1, {}, 'feeds.wamp']),
    ],
    setup: [JSON.stringify([1, 'realm1', { roles: { publisher: {} } }])],
    publish: (seq, payload) => JSON.stringify([16, seq + 1, {}, 'feeds.wamp', [payload]]),
    events: (data) => (data[1] === 0x33 && data[2] === 0x36 ? 1 : 0),
    dropped: /^broker_messages_dropped_total\{endpoint="\/ws"/,
  },
  {
    name: 'chat room',
    path: '/chat',
    subprotocol: 'chat.v1',
    subscribe: () => [JSON.stringify({ type: 'join', room: 'feeds-chat' })],
    setup: [JSON.stringify({ type: 'join', room: 'feeds-chat' })],
    publish: (_seq, payload) => JSON.stringify({ type: 'say', room: 'feeds-chat', text: payload }),
    events: (data) => (data.includes('"type":"message","room":"feeds-chat"') ? 1 : 0),
    dropped: /^broker_messages_dropped_total\{endpoint="\/chat"/,
  },
];
