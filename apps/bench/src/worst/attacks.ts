import mqttPacket from 'mqtt-packet';
import { connectionInit, subscribeMessage } from '../graphql/transport-ws-load.js';
import { connectPacket } from '../mqtt/mqtt-wire.js';

/**
 * The costliest single message per protocol, found by the fuzzers (issue 27) and by hand (issue 28).
 * An attacker sends `message`, waits for the broker's one answer (a message or the close), and sends
 * it again; a closed connection is opened again, and `setup` runs first on each.
 */
export interface Attack {
  readonly name: string;
  readonly path: string;
  readonly subprotocol: string;
  /** What a session needs before the attack message counts (CONNECT, connection_init). */
  readonly setup: readonly (string | Buffer)[];
  /** The message, built per send (ids must differ where the protocol refuses a reused one). */
  message(seq: number): string | Buffer;
  /** An ordinary message, not an attack: the row the attacks are also read against. */
  readonly control?: true;
}

/** What an attacker process tells its parent at the end of its window. */
export interface AttackerReport {
  /** Attack messages the broker answered (a message or the close). */
  readonly answered: number;
  /** Connections opened again after the broker closed one. */
  readonly reconnects: number;
  /** Handshakes refused 429 (the handshake rate per address). */
  readonly refused: number;
}

/** One aliased field, 830 times: 21 KB that graphql-js's OverlappingFieldsCanBeMerged found quadratic. */
const ALIASES = `subscription { ${'a: status { connections } '.repeat(830)}}`;
/** 5,000 nested arrays: 10 KB that overflowed the stack of a recursive walk. */
const DEEP_JSON = `${'['.repeat(5000)}${']'.repeat(5000)}`;

/** A SUBSCRIBE of 500 distinct wildcard filters: the subscription table's work per packet. */
function wildcardSubscribe(seq: number): Buffer {
  return mqttPacket.generate({
    cmd: 'subscribe',
    messageId: (seq % 65_535) + 1,
    subscriptions: Array.from({ length: 500 }, (_, i) => ({
      topic: `site/${i}/+/meter/+/#`,
      qos: 1 as const,
    })),
  });
}

/** What a charge point sends first: until its boot is accepted, any other CALL is refused unread. */
const BOOT_NOTIFICATION = JSON.stringify([
  2,
  'boot',
  'BootNotification',
  { chargePointVendor: 'bench', chargePointModel: 'attacker' },
]);

/** MeterValues with 1,000 sampled values: the schema validation of a large array, and its rows stored. */
function bigMeterValues(seq: number): string {
  const sampledValue = Array.from({ length: 1000 }, (_, i) => ({
    value: String(i * 7),
    measurand: 'Energy.Active.Import.Register',
    unit: 'Wh',
  }));
  return JSON.stringify([
    2,
    `mv${seq}`,
    'MeterValues',
    { connectorId: 1, meterValue: [{ timestamp: '2026-11-27T12:00:00Z', sampledValue }] },
  ]);
}

/** A QoS 1 PUBLISH of 64 bytes that nobody subscribed to: ordinary traffic, answered by a PUBACK. */
function smallPublish(seq: number): Buffer {
  return mqttPacket.generate({
    cmd: 'publish',
    topic: 'control/busy',
    payload: Buffer.alloc(64, 0x61),
    qos: 1,
    messageId: (seq % 65_535) + 1,
    retain: false,
    dup: false,
  });
}

export const ATTACKS: readonly Attack[] = [
  {
    name: 'Control: MQTT QoS 1 PUBLISH of 64 bytes',
    path: '/mqtt',
    subprotocol: 'mqtt',
    setup: [connectPacket('busy')],
    message: smallPublish,
    control: true,
  },
  {
    name: 'GraphQL: subscribe of 830 aliased fields',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: (seq) => subscribeMessage(`a${seq}`, ALIASES),
  },
  {
    name: 'GraphQL: 5,000-deep JSON',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: () => DEEP_JSON,
  },
  {
    name: 'WAMP: 5,000-deep JSON',
    path: '/ws',
    subprotocol: 'wamp.2.json',
    setup: [],
    message: () => DEEP_JSON,
  },
  {
    name: 'MQTT: SUBSCRIBE of 500 wildcard filters',
    path: '/mqtt',
    subprotocol: 'mqtt',
    setup: [connectPacket('attacker')],
    message: wildcardSubscribe,
  },
  {
    name: 'OCPP: MeterValues of 1,000 sampled values',
    path: '/ocpp/attacker',
    subprotocol: 'ocpp1.6',
    setup: [BOOT_NOTIFICATION],
    message: bigMeterValues,
  },
];
