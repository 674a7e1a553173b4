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
  /** An event whose payload is `seq`, a colon, then `payload` (`sequenceOf` reads it back). */
  publish(seq: number, payload: string): string | Buffer;
  /** The sequence numbers of the events in one message the subscriber got; [] for anything else. */
  events(data: Buffer): number[];
  /** What the reader must answer to each event (an MQTT PUBACK), if anything. */
  answer?(data: Buffer): Buffer | null;
  /** The /metrics lines that count what was shed for this feed. */
  readonly dropped: RegExp;
}

/** The number an event's payload starts with (`publish` put it there), or none. */
function sequenceOf(payload: unknown): number[] {
  if (typeof payload !== 'string') return [];
  const seq = Number.parseInt(payload, 10);
  return Number.isNaN(seq) ? [] : [seq];
}

/** The payload of an MQTT 3.1.1 PUBLISH frame (one packet per WebSocket message, as the broker sends). */
function publishPayload(data: Buffer): string | null {
  const first = data[0];
  if (first === undefined || first >> 4 !== 3) return null;
  let at = 1;
  let remaining = 0;
  for (let shift = 0; ; shift += 7) {
    const byte = data[at++] ?? 0;
    remaining += (byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) break;
  }
  const end = at + remaining;
  const withId = ((first >> 1) & 3) > 0 ? 2 : 0;
  return data.toString('utf8', at + 2 + data.readUInt16BE(at) + withId, end);
}

/** A JSON message's field at `path`, or undefined. */
function jsonAt(data: Buffer, path: readonly (string | number)[]): unknown {
  let value: unknown;
  try {
    value = JSON.parse(data.toString('utf8'));
  } catch {
    return undefined;
  }
  for (const key of path) value = (value as Record<string | number, unknown> | null)?.[key];
  return value;
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
        payload: `${seq}:${payload}`,
        qos,
        retain: false,
        dup: false,
        ...(qos === 1 && { messageId: (seq % 65_535) + 1 }),
      }),
    events: (data) => sequenceOf(publishPayload(data)),
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
        { payload: `${seq}:${payload}` },
      ),
    events: (data) =>
      data.includes('"type":"next","payload":{"data":{"topic"')
        ? sequenceOf(jsonAt(data, ['payload', 'data', 'topic', 'payload']))
        : [],
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
    publish: (seq, payload) => JSON.stringify([16, seq + 1, {}, 'feeds.wamp', [`${seq}:${payload}`]]),
    events: (data) => (data[1] === 0x33 && data[2] === 0x36 ? sequenceOf(jsonAt(data, [4, 0])) : []),
    dropped: /^broker_messages_dropped_total\{endpoint="\/ws"/,
  },
  {
    name: 'chat room',
    path: '/chat',
    subprotocol: 'chat.v1',
    subscribe: () => [JSON.stringify({ type: 'join', room: 'feeds-chat' })],
    setup: [JSON.stringify({ type: 'join', room: 'feeds-chat' })],
    publish: (seq, payload) => JSON.stringify({ type: 'say', room: 'feeds-chat', text: `${seq}:${payload}` }),
    events: (data) =>
      data.includes('"type":"message","room":"feeds-chat"') ? sequenceOf(jsonAt(data, ['text'])) : [],
    dropped: /^broker_messages_dropped_total\{endpoint="\/chat"/,
  },
];
