import assert from 'node:assert/strict';
import fc from 'fast-check';
import mqttPacket from 'mqtt-packet';
import { type IncomingMessage } from 'node:http';
import { nestsDeeperThan } from '#broker/kit';
import {
  compileAllowlist,
  CredentialError,
  decideHandshake,
  type AuthPolicy,
  type EndpointSpec,
  type HandshakeContext,
  type ModuleSpec,
  PathDecodeError,
} from '#broker/handshake';
import { TopicAuthorizer } from '#broker/auth';
import { dispatch, MqttBroker, MqttClient, mqttConfig } from '#broker/protocols/mqtt';
import { parseFrame } from '#broker/protocols/ocpp16';
import { ConfigError, loadConfig, parseConfig } from '#broker/config';
// The sans-IO parsers themselves, by path: they are not part of any library's public face.
import {
  CreateChargePointDto,
  UpdateChargePointDto,
} from '../../libs/protocols/ocpp16/src/admin/charge-point.dto.js';
import { CreatePasswordDto, CreateTokenDto } from '../../libs/admin/src/dto/credential.dto.js';
import { CreateWampcraDto } from '../../libs/protocols/wamp/src/admin/cra-credentials.controller.js';
import { AddOriginDto } from '../../libs/admin/src/dto/origin.dto.js';
import { PublishDto } from '../../libs/admin/src/dto/publish.dto.js';
import { InvalidFieldsException } from '../../libs/admin/src/problem.filter.js';
import { adminValidationPipe } from '../../libs/admin/src/validation.js';
import { ForwardedHeaders } from '../../libs/gateway/src/http-front/forwarded.js';
import { extendedConnectRequest } from '../../libs/gateway/src/http-front/http2-front.js';
import { CreateIdTagDto, UpdateIdTagDto } from '../../libs/protocols/ocpp16/src/admin/id-tag.dto.js';
import { parseLegacyMessage } from '../../libs/protocols/graphql/src/legacy-message.js';
import { readTransportWsMessage } from '../../libs/protocols/graphql/src/transport-ws-message.js';
import { decode as decodeWamp } from '../../libs/protocols/wamp/src/messages.js';

/**
 * One fuzz target: inputs from a fast-check arbitrary, a check that must hold for each (no throw
 * out of the parser, an answer of the protocol's own kind). `npm run fuzz` runs each a million
 * times; test/fuzz/parsers.spec.ts runs each briefly, with a fixed seed, inside `npm test`.
 */
export interface FuzzTarget {
  readonly name: string;
  property(): fc.IAsyncProperty<unknown[]> | fc.IProperty<unknown[]>;
}

/** Strings a hostile client would send: mostly ASCII and JSON-ish, with control bytes and Unicode in. */
const hostileText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.json({ maxDepth: 6 }),
  fc.constantFrom('[', '{', '"', '\\', '%', '\u0000', '\ud800', '[[[[[[', '{"a":', '1e400', '-0'),
);

const policy: AuthPolicy = {
  mode: 'optional',
  carriers: new Set(['query', 'cookie', 'header', 'subprotocol', 'first-message']),
  queryParam: 'token',
  cookieName: 'token',
  subprotocolPrefix: 'bearer.',
  certificateSubject: 'cn',
};

function spec(path: string, match: EndpointSpec['match'], subprotocols: string[]): EndpointSpec {
  return {
    path,
    match,
    subprotocols,
    subprotocolOrder: 'client',
    defaultModule: subprotocols[0],
    origins: compileAllowlist(['https://app.example.com', 'null']),
    requireOrigin: false,
    auth: policy,
    maxConnections: undefined,
  };
}

const handshakeContext: HandshakeContext = {
  endpoints: [
    spec('/chat', (p) => (p === '/chat' ? {} : null), ['chat.v1', 'echo.v1']),
    spec(
      '/ocpp/:id',
      (p) => {
        const m = /^\/ocpp\/([^/]+)$/.exec(p);
        if (m === null) return null;
        try {
          return { id: decodeURIComponent(m[1] as string) };
        } catch {
          throw new PathDecodeError('malformed');
        }
      },
      ['ocpp1.6'],
    ),
  ],
  modules: new Map<string, ModuleSpec>([
    ['chat.v1', { name: 'chat.v1', onUnsupported: 'reject', deflate: false, ownFirstMessageAuth: false }],
    ['echo.v1', { name: 'echo.v1', onUnsupported: 'omit', deflate: {}, ownFirstMessageAuth: false }],
    ['ocpp1.6', { name: 'ocpp1.6', onUnsupported: 'omit', deflate: false, ownFirstMessageAuth: false }],
  ]),
  limits: { maxConnections: 100, maxConnectionsPerAddress: 10, retryAfterSec: 1 },
  counts: {
    draining: false,
    unavailable: null,
    total: () => 0,
    forEndpoint: () => 0,
    forAddress: () => 0,
    reserve: () => () => undefined,
    takeHandshake: () => 0,
  },
  hooks: {
    verifyToken: (token, carrier) =>
      token === 'good'
        ? Promise.resolve({ subject: 'alice', claims: {}, carrier })
        : Promise.reject(new CredentialError('the signature is invalid')),
  },
};

const HEADER_NAMES = [
  'Host',
  'Upgrade',
  'Connection',
  'Sec-WebSocket-Key',
  'Sec-WebSocket-Version',
  'Sec-WebSocket-Protocol',
  'Sec-WebSocket-Extensions',
  'Origin',
  'Authorization',
  'Cookie',
  'Content-Length',
  'Transfer-Encoding',
];
const HEADER_VALUES = fc.oneof(
  hostileText,
  fc.constantFrom(
    'websocket',
    'Upgrade',
    'upgrade, keep-alive',
    '13',
    '8',
    'dGhlIHNhbXBsZSBub25jZQ==',
    '127.0.0.1',
    'chat.v1, echo.v1',
    'bearer.good',
    'permessage-deflate; client_max_window_bits',
    'permessage-deflate; server_max_window_bits=08',
    'https://app.example.com',
    'Bearer good',
    'token=good',
  ),
);

/** Raw requests: a method, a version, a path and header lines, mostly plausible, often not. */
const handshakeRequest = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'get', ''),
  httpVersion: fc.constantFrom('1.1', '1.0', '2.0', ''),
  url: fc.oneof(
    fc.constantFrom('/chat', '/ocpp/CP-1', '/ocpp/%ZZ', '/ocpp/CP%2', '/chat?token=good', '/nowhere'),
    fc.string({ maxLength: 80 }).map((s) => `/${s}`),
    fc.string({ maxLength: 40 }).map((s) => `/ocpp/${encodeURIComponent(s)}%`),
  ),
  rawHeaders: fc
    .array(fc.tuple(fc.constantFrom(...HEADER_NAMES), HEADER_VALUES), { maxLength: 12 })
    .map((pairs) => pairs.flat()),
  remoteAddress: fc.constantFrom('127.0.0.1', '::1', '203.0.113.9'),
  secure: fc.boolean(),
});

const STATUSES = new Set([101, 400, 401, 403, 404, 405, 426, 429, 500, 503]);

/**
 * The broker's configuration for the MQTT target, loaded once: loading it for every input (a schema
 * parse of the whole configuration) was a sixth of the target's time.
 */
let mqttFuzzSettings: { mqtt: ReturnType<typeof mqttConfig.of>; authorizer: TopicAuthorizer } | null = null;

function mqttSettings(): NonNullable<typeof mqttFuzzSettings> {
  if (mqttFuzzSettings !== null) return mqttFuzzSettings;
  const config = loadConfig({ env: {}, defaults: { endpoints: [{ path: '/m', subprotocols: ['mqtt'] }] } });
  mqttFuzzSettings = { mqtt: mqttConfig.of(config), authorizer: new TopicAuthorizer(config.authorization) };
  return mqttFuzzSettings;
}

/** A client session of a fresh sans-IO MQTT broker, past CONNECT, fed the bytes. */
async function mqttAfterConnect(bytes: Uint8Array, version: 4 | 5): Promise<number | null> {
  const { mqtt, authorizer } = mqttSettings();
  const broker = new MqttBroker(mqtt, authorizer);
  let ended: number | null = null;
  const quiet = { info() {}, warn() {}, debug() {}, error() {} };
  const client = new MqttClient(
    broker,
    { send: () => undefined, buffered: () => 0, close: (code) => (ended = code) },
    {
      transport: 'ws',
      connectionId: null,
      remoteAddress: '127.0.0.1',
      holdLimits: { maxQueued: 16, maxBytes: 8192 },
      authenticate: async () => ({ ok: true, principal: null }),
    },
    quiet,
    dispatch,
  );
  client.receive(
    mqttPacket.generate(
      { cmd: 'connect', protocolVersion: version, clientId: 'fuzz', clean: true, keepalive: 0 },
      { protocolVersion: version },
    ),
  );
  // CONNECT's authentication settles asynchronously; the packets go after its CONNACK.
  await new Promise((resolve) => setImmediate(resolve));
  client.receive(Buffer.from(bytes));
  await new Promise((resolve) => setImmediate(resolve));
  return ended;
}

/** Packets of every kind, valid or bent, then cut or flipped: what a fuzzer after CONNECT sends. */
const mqttBytes = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc
    .record({
      topic: fc.string({ maxLength: 30 }),
      qos: fc.constantFrom(0, 1, 2),
      id: fc.integer({ min: 0, max: 65535 }),
    })
    .chain(({ topic, qos, id }) =>
      fc.constantFrom<Uint8Array>(
        Buffer.from([0x82, 0x02, 0x00, 0x01]),
        Buffer.from([0xa2, 0x02, 0x00, 0x02]),
        safeGenerate({
          cmd: 'publish',
          topic,
          payload: Buffer.from('x'),
          qos,
          messageId: id,
          dup: false,
          retain: false,
        }),
        safeGenerate({ cmd: 'subscribe', messageId: id || 1, subscriptions: [{ topic, qos }] }),
        safeGenerate({ cmd: 'unsubscribe', messageId: id || 1, unsubscriptions: [topic] }),
        safeGenerate({ cmd: 'pubrel', messageId: id }),
      ),
    ),
  fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 60 }), fc.nat(59), fc.nat(255)).map(([b, at, v]) => {
    const copy = Buffer.from(b);
    copy[at % copy.length] = v;
    return copy;
  }),
);

function safeGenerate(packet: mqttPacket.Packet): Uint8Array {
  try {
    return mqttPacket.generate(packet, { protocolVersion: 5 });
  } catch {
    return Buffer.from([0xe0, 0x00]);
  }
}

/** Every admin body type, as the controllers declare them. */
const ADMIN_BODY_TYPES = [
  AddOriginDto,
  CreateTokenDto,
  CreatePasswordDto,
  CreateWampcraDto,
  CreateChargePointDto,
  UpdateChargePointDto,
  CreateIdTagDto,
  UpdateIdTagDto,
  PublishDto,
] as const;

const ADMIN_FIELDS = [
  'origin',
  'endpoint',
  'name',
  'scopes',
  'username',
  'password',
  'identity',
  'allowed',
  'idTag',
  'status',
  'expiresAt',
  'authid',
  'secret',
  'role',
  'parentIdTag',
  'topic',
  'payload',
  'contentType',
  '__proto__',
  'constructor',
];

/**
 * Admin bodies: any JSON, often nearly right (known fields, any values), and nestings up to the 64
 * levels the body parser lets through (json-body.middleware.ts refuses deeper ones).
 */
const adminBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(fc.constantFrom(...ADMIN_FIELDS), fc.jsonValue({ maxDepth: 2 })),
  fc
    .tuple(fc.integer({ min: 1, max: 64 }), fc.constantFrom(...ADMIN_FIELDS), fc.boolean())
    .map(([depth, field, inArrays]) => {
      let value: unknown = 'x';
      for (let i = 1; i < depth; i++) value = inArrays ? [value] : { [field]: value };
      return { [field]: value };
    }),
);

/** HTTP/2 request heads as a client may send them: the pseudo-headers present or not, any values. */
const http2Head = fc
  .record(
    {
      ':method': fc.constantFrom('CONNECT', 'GET', 'connect', ''),
      ':protocol': fc.oneof(fc.constantFrom('websocket', 'WebSocket', 'h2c', ''), hostileText),
      ':path': fc.oneof(fc.constantFrom('/chat', '/ocpp/CP-1', '/ocpp/%ZZ', '*', ''), hostileText),
      ':authority': fc.oneof(fc.constantFrom('127.0.0.1', 'example.com:443', ''), hostileText),
      ':scheme': fc.constantFrom('https', 'http', ''),
      'sec-websocket-version': fc.oneof(fc.constantFrom('13', '8'), hostileText),
      'sec-websocket-protocol': HEADER_VALUES,
      'sec-websocket-extensions': HEADER_VALUES,
      origin: HEADER_VALUES,
      authorization: HEADER_VALUES,
      host: HEADER_VALUES,
      cookie: fc.array(HEADER_VALUES, { maxLength: 3 }),
    },
    { requiredKeys: [] },
  )
  .map((head) => head as Record<string, string | string[]>);

function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((max: number, child) => Math.max(max, depthOf(child)), 0);
}

export const TARGETS: readonly FuzzTarget[] = [
  {
    name: 'handshake decision (raw request heads)',
    property: () =>
      fc.asyncProperty(handshakeRequest, async (request) => {
        const decision = await decideHandshake(request, handshakeContext);
        assert.ok(['accept', 'reject', 'plain', 'pass'].includes(decision.kind));
        if (decision.kind === 'reject') assert.ok(STATUSES.has(decision.status), String(decision.status));
        if (decision.kind === 'accept') decision.release();
      }),
  },
  {
    name: 'WAMP messages',
    property: () =>
      fc.property(hostileText, (text) => {
        const decoded = decodeWamp(text);
        assert.ok(typeof decoded === 'object' && decoded !== null);
      }),
  },
  {
    name: 'graphql-transport-ws messages',
    property: () =>
      fc.property(hostileText, (text) => {
        const read = readTransportWsMessage(text);
        assert.ok(read.ok || typeof read.problem === 'string');
      }),
  },
  {
    name: 'legacy graphql-ws messages',
    property: () =>
      fc.property(hostileText, (text) => {
        assert.equal(typeof parseLegacyMessage(text).ok, 'boolean');
      }),
  },
  {
    name: 'OCPP-J frames',
    property: () =>
      fc.property(hostileText, (text) => {
        assert.equal(typeof parseFrame(text).ok, 'boolean');
      }),
  },
  {
    name: 'MQTT packets after CONNECT (v5 and v3.1.1)',
    property: () =>
      fc.asyncProperty(mqttBytes, fc.constantFrom<4 | 5>(4, 5), async (bytes, version) => {
        const ended = await mqttAfterConnect(bytes, version);
        // A malformed packet is the client's fault: never 1011 (an internal error of ours).
        assert.notEqual(ended, 1011);
      }),
  },
  {
    name: 'JSON nesting scan (against a real parse)',
    property: () =>
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 12 }), (value, limit) => {
        assert.equal(nestsDeeperThan(JSON.stringify(value), limit), depthOf(value) > limit);
      }),
  },
  {
    name: 'configuration objects (as a YAML file or an application would give them)',
    property: () =>
      fc.property(
        fc.oneof(
          fc.jsonValue({ maxDepth: 5 }),
          fc.record(
            {
              port: fc.jsonValue({ maxDepth: 1 }),
              http: fc.dictionary(
                fc.constantFrom('maxHeaderSize', 'trustedProxies', 'proxyProtocol'),
                fc.jsonValue({ maxDepth: 2 }),
              ),
              endpoints: fc.array(
                fc.dictionary(
                  fc.constantFrom('path', 'subprotocols', 'perMessageDeflate', 'auth'),
                  fc.jsonValue({ maxDepth: 2 }),
                ),
                { maxLength: 3 },
              ),
              mqtt: fc.dictionary(fc.string({ maxLength: 20 }), fc.jsonValue({ maxDepth: 1 })),
            },
            { requiredKeys: [] },
          ),
        ),
        (raw) => {
          try {
            parseConfig(raw, [mqttConfig]);
          } catch (err) {
            // A bad configuration is refused with a message naming the key, and nothing else escapes.
            assert.ok(err instanceof ConfigError, String(err));
          }
        },
      ),
  },
  {
    name: 'Forwarded and X-Forwarded-* headers from a trusted proxy',
    property: () =>
      fc.property(hostileText, hostileText, fc.boolean(), (forwarded, xff, useForwarded) => {
        const resolver = new ForwardedHeaders(['127.0.0.1']);
        const headers = useForwarded
          ? { forwarded }
          : { 'x-forwarded-for': xff, 'x-forwarded-proto': forwarded };
        const origin = resolver.resolve({
          socket: { remoteAddress: '127.0.0.1' },
          headers,
        } as unknown as IncomingMessage);
        assert.equal(typeof origin.address, 'string');
        assert.ok(origin.address.length > 0);
      }),
  },
  {
    name: 'admin bodies through the validation pipe (every body type)',
    property: () =>
      fc.asyncProperty(fc.constantFrom(...ADMIN_BODY_TYPES), adminBody, async (metatype, body) => {
        try {
          const value: unknown = await adminValidationPipe.transform(body, { type: 'body', metatype });
          // Accepted: an instance of the body type, never a bare value or an array.
          assert.ok(
            value instanceof metatype,
            `${metatype.name} accepted ${JSON.stringify(body)?.slice(0, 200)}`,
          );
        } catch (err) {
          // Refused: the 400 naming the fields, nothing else (a TypeError or RangeError would be a 500).
          assert.ok(err instanceof InvalidFieldsException, String(err));
        }
      }),
  },
  {
    name: 'HTTP/2 request heads (extended CONNECT) to the handshake decision',
    property: () =>
      fc.asyncProperty(http2Head, fc.boolean(), async (headers, secure) => {
        const request = extendedConnectRequest(
          headers,
          { address: '203.0.113.9', secure, host: undefined },
          undefined,
        );
        const decision = await decideHandshake(request, handshakeContext);
        assert.ok(['accept', 'reject', 'plain', 'pass'].includes(decision.kind));
        if (decision.kind === 'reject') assert.ok(STATUSES.has(decision.status), String(decision.status));
        if (decision.kind === 'accept') decision.release();
      }),
  },
];
