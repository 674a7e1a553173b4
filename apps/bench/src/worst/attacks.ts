import mqttPacket from 'mqtt-packet';
import { connectionInit, subscribeMessage } from '../graphql/transport-ws-load.js';
import { connectPacket } from '../mqtt/mqtt-wire.js';
import { type AttackerReport } from './attacker-report.js';
import {
  type ConnectionAttackTarget,
  http2RapidReset,
  PIPELINED_REQUEST,
  pipelining,
  silentSockets,
} from './connection-attacks.js';

/**
 * The costliest single message per protocol, found by the fuzzers (issue 27) and by hand (issues 28
 * and 37). A message attack sends `message`, waits for the broker's one answer (a message or the
 * close), and sends it again; a closed connection is opened again, and `setup` runs first on each.
 * A connection attack (connection-attacks.ts) works below the WebSocket messages: pipelined HTTP
 * requests, silent sockets, HTTP/2 streams reset at once.
 */
export type Attack = MessageAttack | ConnectionAttack;

export interface MessageAttack {
  readonly kind: 'message';
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

export interface ConnectionAttack {
  readonly kind: 'connection';
  readonly name: string;
  /** The bytes of one unit of the attack (a request; 0 for a connection that sends nothing). */
  readonly bytes: number;
  run(target: ConnectionAttackTarget, until: number): Promise<AttackerReport>;
  readonly control?: undefined;
}

/** One aliased field, 830 times: 21 KB that graphql-js's OverlappingFieldsCanBeMerged found quadratic. */
const ALIASES = `subscription { ${'a: status { connections } '.repeat(830)}}`;
/** 5,000 nested arrays: 10 KB that overflowed the stack of a recursive walk. */
const DEEP_JSON = `${'['.repeat(5000)}${']'.repeat(5000)}`;

/**
 * A document never sent before, about 26 KB: a query with a unique operation name, padded with a
 * comment (which the lexer reads and the token limit does not count), answered at once. Each one is
 * parsed and validated; the cache keeps only documents under 16 KiB, within 512 KiB in all.
 */
function uniqueDocument(seq: number): string {
  return subscribeMessage(`u${seq}`, `query Q${seq} { status { connections } }\n#${'x'.repeat(26_000)}`);
}

/** A value 2,000 lists deep in an argument (4 KB, under maxTokens): refused by the nesting bound. */
const DEEP_VALUE = `{ status(x: ${'['.repeat(2000)}${']'.repeat(2000)}) { connections } }`;

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
    kind: 'message',
    name: 'Control: MQTT QoS 1 PUBLISH of 64 bytes',
    path: '/mqtt',
    subprotocol: 'mqtt',
    setup: [connectPacket('busy')],
    message: smallPublish,
    control: true,
  },
  {
    kind: 'message',
    name: 'GraphQL: subscribe of 830 aliased fields',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: (seq) => subscribeMessage(`a${seq}`, ALIASES),
  },
  {
    kind: 'message',
    name: 'GraphQL: 5,000-deep JSON',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: () => DEEP_JSON,
  },
  {
    kind: 'message',
    name: 'WAMP: 5,000-deep JSON',
    path: '/ws',
    subprotocol: 'wamp.2.json',
    setup: [],
    message: () => DEEP_JSON,
  },
  {
    kind: 'message',
    name: 'MQTT: SUBSCRIBE of 500 wildcard filters',
    path: '/mqtt',
    subprotocol: 'mqtt',
    setup: [connectPacket('attacker')],
    message: wildcardSubscribe,
  },
  {
    kind: 'message',
    name: 'OCPP: MeterValues of 1,000 sampled values',
    path: '/ocpp/attacker',
    subprotocol: 'ocpp1.6',
    setup: [BOOT_NOTIFICATION],
    message: bigMeterValues,
  },
  {
    kind: 'message',
    name: 'GraphQL: a new 26 KB document each time',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: uniqueDocument,
  },
  {
    kind: 'message',
    name: 'GraphQL: a value 2,000 lists deep',
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    setup: [connectionInit()],
    message: (seq) => subscribeMessage(`d${seq}`, DEEP_VALUE),
  },
  {
    kind: 'connection',
    name: 'HTTP: 32 pipelined admin GETs outstanding',
    bytes: Buffer.byteLength(PIPELINED_REQUEST),
    run: pipelining,
  },
  {
    kind: 'connection',
    name: 'TCP: 2,048 silent sockets held',
    bytes: 0,
    run: silentSockets,
  },
  {
    kind: 'connection',
    name: 'HTTP/2: rapid reset (streams opened and reset at once)',
    bytes: 0,
    run: http2RapidReset,
  },
];
