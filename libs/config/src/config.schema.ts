import { z } from 'zod';
import { authorization } from './authorization.schema.js';
import { cluster } from './cluster.schema.js';
import { inputBudget, proxyEntry, timerMs, timerMsOrOff } from './schema-units.js';
import { introspection } from './introspection.schema.js';
import { jwt } from './jwt.schema.js';

export { MAX_TIMER_MS } from './schema-units.js';

// One schema for the whole broker (the larger sections in files of their own): every default lives in
// the schemas, so `npm start` with no file is useful.

const carrier = z.enum(['query', 'cookie', 'header', 'subprotocol', 'first-message', 'certificate']);

const authPolicy = z
  .object({
    mode: z.enum(['none', 'optional', 'required']).default('none'),
    carriers: z.array(carrier).min(1).default(['query', 'cookie', 'header', 'subprotocol', 'first-message']),
    queryParam: z.string().min(1).default('token'),
    cookieName: z.string().min(1).default('token'),
    subprotocolPrefix: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an RFC 7230 token')
      .default('bearer.'),
    /** With the `certificate` carrier: the Common Name, or the first SAN of a kind, is the subject. */
    certificateSubject: z.enum(['cn', 'dns', 'uri', 'email']).default('cn'),
    firstMessageTimeoutMs: timerMs.default(5000),
    /** How long the application's handshake guards may take together (past it: 503). */
    guardTimeoutMs: timerMs.default(5000),
    firstMessageMaxBytes: z.number().int().positive().default(8192),
    firstMessageMaxQueued: z.number().int().nonnegative().default(16),
  })
  .strict();

/** An endpoint's auth settings when it sets none; MQTT over TCP, which has no endpoint, holds to these. */
export const DEFAULT_AUTH_POLICY = authPolicy.parse({});

/**
 * permessage-deflate for an endpoint's modules, overriding each module's own choice: false forbids
 * it; an object enables it with these RFC 7692 parameters and zlib settings.
 */
const endpointDeflate = z.union([
  z.literal(false),
  z
    .object({
      serverNoContextTakeover: z.boolean().default(false),
      clientNoContextTakeover: z.boolean().default(false),
      serverMaxWindowBits: z.number().int().min(9).max(15).optional(),
      clientMaxWindowBits: z.number().int().min(9).max(15).optional(),
      /** zlib's memory level for compressing (1..9): lower costs less memory per connection. */
      memLevel: z.number().int().min(1).max(9).default(8),
      /** Messages shorter than this (bytes) are sent uncompressed. */
      threshold: z.number().int().nonnegative().default(1024),
    })
    .strict(),
]);

const endpoint = z
  .object({
    path: z.string().startsWith('/', 'must start with /'),
    /** false: not served (a default endpoint a CONFIG file turns off by its path). */
    enabled: z.boolean().default(true),
    subprotocols: z.array(z.string().min(1)).min(1),
    subprotocolOrder: z.enum(['client', 'server']).default('client'),
    defaultModule: z.string().min(1).optional(),
    origins: z.array(z.string()).default([]),
    requireOrigin: z.boolean().default(false),
    auth: authPolicy.default(DEFAULT_AUTH_POLICY),
    maxConnections: z.number().int().positive().optional(),
    pingIntervalMs: timerMsOrOff.default(30_000),
    perMessageDeflate: endpointDeflate.optional(),
    maxPayload: z.number().int().positive().optional(),
    outboundBufferCap: z
      .number()
      .int()
      .positive()
      .default(4 * 1024 * 1024),
    /**
     * Events a module marks as droppable (a subscription's deliveries) are dropped and counted, not
     * queued, while a client has more than this many bytes unsent; it is closed 1008 only past
     * outboundBufferCap, which its other messages (answers, results) still count towards.
     */
    slowConsumerDropBytes: z.number().int().positive().optional(),
    inputBudget: inputBudget.default(false),
  })
  .strict()
  .refine((e) => e.defaultModule === undefined || e.subprotocols.includes(e.defaultModule), {
    message: 'defaultModule must be one of the endpoint subprotocols',
    path: ['defaultModule'],
  })
  .refine((e) => e.slowConsumerDropBytes === undefined || e.slowConsumerDropBytes < e.outboundBufferCap, {
    message: 'must be below outboundBufferCap: events are dropped before the client is cut',
    path: ['slowConsumerDropBytes'],
  })
  // Unset: 1 MiB, or a quarter of a smaller outboundBufferCap.
  .transform((e) => ({
    ...e,
    slowConsumerDropBytes:
      e.slowConsumerDropBytes ?? Math.min(1024 * 1024, Math.floor(e.outboundBufferCap / 4)),
  }));

export const brokerConfigSchema = z
  .object({
    host: z.string().default('0.0.0.0'),
    port: z.number().int().min(0).max(65535).default(8080),
    tls: z
      .object({
        certFile: z.string(),
        keyFile: z.string(),
        /**
         * The authorities whose client certificates the broker verifies. When set, every TLS client
         * is asked for one (optional to TLS itself: an endpoint decides, as OCPP security profile 3).
         */
        caFile: z.string().optional(),
        /** Revoked client certificates (PEM CRLs of the authorities in caFile). */
        crlFile: z.string().optional(),
        /** How often the files are checked for a change; a change is loaded without a restart. */
        reloadIntervalMs: timerMs.default(10_000),
      })
      .strict()
      .refine((t) => t.crlFile === undefined || t.caFile !== undefined, {
        message: 'a CRL revokes client certificates: it needs caFile',
        path: ['crlFile'],
      })
      .optional(),
    http: z
      .object({
        maxHeaderSize: z
          .number()
          .int()
          .min(1024)
          .default(16 * 1024),
        headersTimeoutMs: timerMs.default(10_000),
        requestTimeoutMs: timerMs.default(30_000),
        /**
         * Proxies whose Forwarded / X-Forwarded-* headers are believed: only from these peers does
         * the client's address, scheme and host come from the headers. Empty: nobody's.
         */
        trustedProxies: z.array(proxyEntry).max(256).default([]),
        /** PROXY protocol v1/v2 on the listener (before TLS, where the broker has it): a trusted proxy may lead each connection with a header. */
        proxyProtocol: z.boolean().default(false),
        /**
         * HTTP/2 beside HTTP/1.1 on the listener (ALPN h2 with TLS, prior-knowledge h2c without):
         * WebSockets by extended CONNECT (RFC 8441), other requests answered by the same app.
         */
        http2: z.boolean().default(false),
        /**
         * Plain HTTP requests (admin, probes, pages) of one client address held to a share of the
         * loop, as an endpoint's inputBudget holds a WebSocket's messages: false (the default) is off.
         */
        inputBudget: inputBudget.default(false),
      })
      .strict()
      .refine((h) => !h.proxyProtocol || h.trustedProxies.length > 0, {
        message: 'the PROXY protocol needs http.trustedProxies: only they may send the header',
        path: ['proxyProtocol'],
      })
      .default({
        maxHeaderSize: 16 * 1024,
        headersTimeoutMs: 10_000,
        requestTimeoutMs: 30_000,
        trustedProxies: [],
        proxyProtocol: false,
        http2: false,
        inputBudget: false,
      }),
    jwt: jwt.optional(),
    introspection: introspection.optional(),
    limits: z
      .object({
        maxConnections: z.number().int().positive().default(10_000),
        maxConnectionsPerAddress: z.number().int().positive().default(256),
        /** Handshakes a second one address may start on average (0: no limit), and at once. */
        handshakesPerSecondPerAddress: z.number().nonnegative().default(50),
        handshakeBurstPerAddress: z.number().int().positive().default(256),
        retryAfterSec: z.number().int().positive().default(5),
      })
      .strict()
      .default({
        maxConnections: 10_000,
        maxConnectionsPerAddress: 256,
        handshakesPerSecondPerAddress: 50,
        handshakeBurstPerAddress: 256,
        retryAfterSec: 5,
      }),
    shutdown: z
      .object({ drainTimeoutMs: timerMsOrOff.default(10_000) })
      .strict()
      .default({ drainTimeoutMs: 10_000 }),
    log: z
      .object({
        level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      })
      .strict()
      .default({ level: 'info' }),
    store: z
      .object({
        /** SQLite file used when no databaseUrl is set; created with its folder on first start. */
        sqlitePath: z.string().min(1).default('data/broker.db'),
        /** postgres://... : PostgreSQL instead of SQLite (several broker nodes share it). */
        databaseUrl: z
          .string()
          .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
          .optional(),
        /** How often a node reloads allowlists changed by another node (PostgreSQL only). */
        refreshIntervalMs: timerMs.default(2000),
      })
      .strict()
      .default({ sqlitePath: 'data/broker.db', refreshIntervalMs: 2000 }),
    admin: z
      .object({
        /** Bearer tokens with full admin rights; none: the admin API answers loopback clients only. */
        tokens: z.array(z.string().min(16, 'must be at least 16 characters')).default([]),
        maxBodyBytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024),
      })
      .strict()
      .default({ tokens: [], maxBodyBytes: 64 * 1024 }),
    authorization: authorization.default(authorization.parse({})),
    endpoints: z
      .array(endpoint)
      .transform((list) => list.filter((e) => e.enabled))
      .refine((list) => list.length > 0, { message: 'at least one endpoint must be enabled' }),
    cluster: cluster.default(cluster.parse({})),
  })
  .strict()
  .refine((c) => c.cluster.natsUrl === undefined || c.store.databaseUrl !== undefined, {
    message:
      'cluster mode (NATS_URL) needs PostgreSQL (DATABASE_URL): a SQLite file belongs to one node, so the nodes would not share origins, credentials or charge points',
    path: ['cluster', 'natsUrl'],
  });

export type BrokerConfig = z.infer<typeof brokerConfigSchema>;
export type EndpointConfig = BrokerConfig['endpoints'][number];
export type AuthPolicyConfig = EndpointConfig['auth'];
export type AuthCarrier = z.infer<typeof carrier>;
export type JwtConfig = NonNullable<BrokerConfig['jwt']>;
export type IntrospectionConfig = NonNullable<BrokerConfig['introspection']>;
export type StoreConfig = BrokerConfig['store'];
export type AdminConfig = BrokerConfig['admin'];
export type ClusterConfig = BrokerConfig['cluster'];
/** A configuration as written (YAML, JSON or an application's object): defaults not yet applied. */
export type BrokerConfigInput = z.input<typeof brokerConfigSchema>;
/** The same, with the keys the application's modules add (their ConfigSections validate them). */
export type BrokerConfigWithSections = BrokerConfigInput & { readonly [section: string]: unknown };
