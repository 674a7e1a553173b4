import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { wampConfigSchema } from './wamp.schema.js';

// One schema for the whole broker: every default lives here, so `npm start` with no file is useful.

/** The longest delay setTimeout and setInterval take (2^31 - 1 ms): above it Node waits 1 ms instead. */
export const MAX_TIMER_MS = 2_147_483_647;
/** A time in milliseconds that the broker waits with a timer. */
const timerMs = z.number().int().positive().max(MAX_TIMER_MS);
/** An address, a CIDR or one of proxy-addr's names (loopback, linklocal, uniquelocal). */
const proxyEntry = z.string().refine(
  (entry) => {
    try {
      proxyaddr.compile(entry);
      return true;
    } catch {
      return false;
    }
  },
  {
    message: "expected an IP address, a CIDR ('10.0.0.0/8', 'fd00::/8') or loopback, linklocal, uniquelocal",
  },
);

/** The same, where 0 turns the timer off. */
const timerMsOrOff = z.number().int().nonnegative().max(MAX_TIMER_MS);

const carrier = z.enum(['query', 'cookie', 'header', 'subprotocol', 'first-message']);

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
    firstMessageTimeoutMs: timerMs.default(5000),
    firstMessageMaxBytes: z.number().int().positive().default(8192),
    firstMessageMaxQueued: z.number().int().nonnegative().default(16),
  })
  .strict();

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
    subprotocols: z.array(z.string().min(1)).min(1),
    subprotocolOrder: z.enum(['client', 'server']).default('client'),
    defaultModule: z.string().min(1).optional(),
    origins: z.array(z.string()).default([]),
    requireOrigin: z.boolean().default(false),
    auth: authPolicy.default(authPolicy.parse({})),
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

const jwt = z
  .object({
    secret: z.string().min(32, 'must be at least 32 characters (HS256 key)').optional(),
    publicKeyFile: z.string().min(1).optional(),
    jwksFile: z.string().min(1).optional(),
    algorithms: z.array(z.string()).min(1).optional(),
    issuer: z.string().optional(),
    audience: z.string().optional(),
    clockToleranceSec: z.number().int().nonnegative().default(5),
    /** Verified tokens remembered, so a reconnect with the same token skips the signature check; 0 turns it off. */
    verifiedCacheSize: z.number().int().nonnegative().max(1_000_000).default(4096),
  })
  .strict()
  .refine((j) => [j.secret, j.publicKeyFile, j.jwksFile].filter((v) => v !== undefined).length <= 1, {
    message: 'set only one of secret, publicKeyFile, jwksFile',
  });

const securityProfile = z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]);

const organization = z.string().min(1).max(64);

/** A per-endpoint override of the ocpp section's connection rules, matched by the endpoint's path. */
const ocppEndpoint = z
  .object({
    path: z.string().startsWith('/', 'must start with /'),
    allowUnknownChargePoints: z.boolean().optional(),
    securityProfile: securityProfile.optional(),
    certificateOrganization: organization.optional(),
  })
  .strict();

/** The ocpp1.6 module (central system); see the README's OCPP section. */
const ocpp = z
  .object({
    /** Charge points not in the store may connect (they still have to boot). */
    allowUnknownChargePoints: z.boolean().default(true),
    /**
     * 0: Basic auth only where a key is stored; 1: Basic auth always; 2: Basic auth over TLS only;
     * 3: a TLS client certificate from tls.caFile naming the charge point (no Basic auth).
     */
    securityProfile: securityProfile.default(0),
    /**
     * Profile 3: the Organization (O) every charge point certificate must name (the whitepaper's
     * CPO name), so that a CA also signing others' certificates does not open the endpoint to them.
     */
    certificateOrganization: organization.optional(),
    /** accept: every BootNotification; pending-unknown / reject-unknown: charge points not in the store. */
    bootPolicy: z.enum(['accept', 'pending-unknown', 'reject-unknown']).default('accept'),
    heartbeatIntervalSec: z.number().int().positive().default(300),
    /** The interval a Pending or Rejected BootNotification answer asks the charge point to wait. */
    bootRetryIntervalSec: z.number().int().positive().default(60),
    callTimeoutMs: timerMs.default(30_000),
    /** Calls waiting behind the outstanding one, per direction and connection. */
    maxQueuedCalls: z.number().int().positive().default(16),
    endpoints: z.array(ocppEndpoint).default([]),
  })
  .strict()
  .superRefine((o, ctx) => {
    const rules = [{ ...o, path: undefined }, ...o.endpoints];
    rules.forEach((rule, index) => {
      const allow = rule.allowUnknownChargePoints ?? o.allowUnknownChargePoints;
      const profile = rule.securityProfile ?? o.securityProfile;
      if (allow && (profile === 1 || profile === 2)) {
        ctx.addIssue({
          code: 'custom',
          path:
            index === 0 ? ['allowUnknownChargePoints'] : ['endpoints', index - 1, 'allowUnknownChargePoints'],
          message: `must be false with security profile ${profile}: an unknown charge point has no key to check`,
        });
      }
    });
  });

function usesProfile3(o: z.infer<typeof ocpp>): boolean {
  return o.securityProfile === 3 || o.endpoints.some((e) => e.securityProfile === 3);
}

/** One MQTT topic rule (README: "Topic rules"); its filters are checked when the MQTT module starts. */
const aclRule = z
  .object({
    who: z.enum(['all', 'anonymous', 'authenticated']).default('all'),
    user: z.string().min(1).optional(),
    clientId: z.string().min(1).optional(),
    action: z.enum(['publish', 'subscribe', 'all']).default('all'),
    topics: z.array(z.string().min(1).max(65_535)).min(1).max(100),
    permission: z.enum(['allow', 'deny']),
  })
  .strict()
  .refine((r) => !(r.who === 'anonymous' && r.user !== undefined), {
    message: 'a rule for one user cannot be for anonymous clients',
    path: ['user'],
  });

const mqtt = z
  .object({
    /** MQTT over plain TCP for devices without WebSocket: null is off, 0 an ephemeral port. */
    tcpPort: z.number().int().min(0).max(65535).nullable().default(null),
    tcpHost: z.string().default('0.0.0.0'),
    /** TCP has no handshake: when true, CONNECT must carry a credential. */
    tcpAuthRequired: z.boolean().default(false),
    connectTimeoutMs: timerMs.default(10_000),
    maxPacketSize: z
      .number()
      .int()
      .min(1024)
      .max(268_435_455)
      .default(1024 * 1024),
    /** QoS 1/2 messages in flight towards a client (v3, or v5 clients announcing more). */
    maxInflight: z.number().int().min(1).max(65535).default(32),
    /** Unacknowledged QoS 2 messages a client may have in flight towards the broker (v5 receive maximum). */
    receiveMaximum: z.number().int().min(1).max(65535).default(32),
    /** QoS 1/2 messages (and their bytes) queued per session beyond the in-flight window; the oldest are dropped past either. */
    maxQueuedMessages: z.number().int().nonnegative().default(1000),
    maxQueuedBytes: z
      .number()
      .int()
      .nonnegative()
      .default(16 * 1024 * 1024),
    /**
     * A QoS 0 PUBLISH to a client with more than this many bytes not yet written to it is dropped
     * (counted) rather than queued: a subscriber that cannot keep up loses QoS 0 messages first, as
     * with Mosquitto and EMQX, and is closed 1008 only past the endpoint's outboundBufferCap.
     */
    slowSubscriberDropBytes: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    maxSubscriptionsPerClient: z.number().int().positive().default(256),
    /** Sessions kept at once, connected or waiting for their client; a new client id past it is refused. */
    maxSessions: z.number().int().positive().default(100_000),
    maxRetainedMessages: z.number().int().nonnegative().default(100_000),
    maxRetainedBytes: z
      .number()
      .int()
      .nonnegative()
      .default(256 * 1024 * 1024),
    topicAliasMaximum: z.number().int().min(0).max(65535).default(32),
    maxKeepAliveSec: z.number().int().min(1).max(65535).default(65535),
    /** Upper bound for v5 session expiry, and the expiry of v3 persistent sessions. */
    maxSessionExpirySec: z
      .number()
      .int()
      .nonnegative()
      // Session timers are Node timers, which hold at most 2^31 - 1 ms (24.8 days).
      .max(2_000_000)
      .default(7 * 24 * 3600),
    /** $SYS/broker/... statistics period; 0 is off. */
    sysIntervalSec: z.number().int().nonnegative().default(10),
    /** Topic rules beside a token's mqtt: scopes: in order, the first that applies decides; none: noMatch. */
    acl: z
      .object({
        rules: z.array(aclRule).max(10_000).default([]),
        noMatch: z.enum(['allow', 'deny']).default('allow'),
      })
      .strict()
      .default({ rules: [], noMatch: 'allow' }),
  })
  .strict();

const positive = z.number().int().positive().optional();

/** A NATS subject token of ours: the cluster's name and a node's id both become one. */
const subjectToken = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _');

/** Several nodes acting as one broker over NATS; on when natsUrl is set. See the README's "Several nodes". */
const cluster = z
  .object({
    /** NATS servers (nats://host:port); any one of them is enough, the client fails over between them. */
    natsUrl: z
      .array(z.string().regex(/^(nats|tls):\/\/[^\s]+$/, 'must be a nats:// or tls:// URL'))
      .min(1)
      .optional(),
    /** This node's name in the cluster; default: the host name and the port (the process id for port 0). */
    nodeId: subjectToken.optional(),
    /** Prefix of every subject and bucket, so several clusters can share one NATS. */
    name: subjectToken.default('broker'),
    /** How often a node renews its heartbeat entry. */
    heartbeatMs: timerMs.default(1000),
    /** A node whose heartbeat is older than this is dead for the others. */
    nodeTimeoutMs: timerMs.default(5000),
    /** How long a request to another node (an admin listing, a close) waits for its answer. */
    requestTimeoutMs: timerMs.default(2000),
    /**
     * MQTT QoS 1/2 from the stream: how long a message in flight to a client may stay unacknowledged
     * before the stream gives it to the next reader (after its node died, say), with DUP set.
     */
    mqttAckWaitMs: timerMs.default(30_000),
    /**
     * Copies JetStream keeps of every bucket and stream the cluster makes: 3 on a NATS cluster of three
     * or more servers, so that an acknowledged message survives a NATS server's loss; 1 on a single server.
     */
    replicas: z.number().int().min(1).max(5).default(1),
    /**
     * Bytes the MQTT message stream may hold (JetStream reserves them); past it a QoS 1/2 publish is
     * refused (PUBACK 0x97) rather than an acknowledged message dropped. 0: no limit, which lets the
     * stream fill JetStream's storage and stop session writes too: set it below the server's storage.
     */
    mqttStreamMaxBytes: z.number().int().nonnegative().default(0),
  })
  .strict()
  .refine((c) => c.nodeTimeoutMs > 2 * c.heartbeatMs, {
    message: 'must be more than twice heartbeatMs, or a live node would look dead',
    path: ['nodeTimeoutMs'],
  });

/** The GraphQL modules' limits an operator may set; each one given overrides the application's and the default. */
const graphql = z
  .object({
    limits: z
      .object({
        maxOperations: positive,
        maxDepth: positive,
        maxComplexity: positive,
        maxTokens: positive,
        maxAliases: positive,
        maxRepeatedFields: positive,
        initTimeoutMs: timerMs.optional(),
        keepAliveMs: timerMsOrOff.optional(),
        maxPendingEvents: positive,
      })
      .strict()
      .default({}),
  })
  .strict();

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
      }),
    jwt: jwt.optional(),
    limits: z
      .object({
        maxConnections: z.number().int().positive().default(10_000),
        maxConnectionsPerAddress: z.number().int().positive().default(256),
        retryAfterSec: z.number().int().positive().default(5),
      })
      .strict()
      .default({ maxConnections: 10_000, maxConnectionsPerAddress: 256, retryAfterSec: 5 }),
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
    ocpp: ocpp.default(ocpp.parse({})),
    mqtt: mqtt.default(mqtt.parse({})),
    graphql: graphql.default({ limits: {} }),
    endpoints: z.array(endpoint).min(1),
    wamp: wampConfigSchema.default(wampConfigSchema.parse({})),
    cluster: cluster.default(cluster.parse({})),
  })
  .strict()
  .refine((c) => !usesProfile3(c.ocpp) || c.tls?.caFile !== undefined, {
    message:
      "OCPP security profile 3 needs tls with a caFile: the broker itself verifies the charge points' client certificates",
    path: ['ocpp', 'securityProfile'],
  })
  .refine((c) => c.cluster.natsUrl === undefined || c.store.databaseUrl !== undefined, {
    message:
      'cluster mode (NATS_URL) needs PostgreSQL (DATABASE_URL): a SQLite file belongs to one node, so the nodes would not share origins, credentials or charge points',
    path: ['cluster', 'natsUrl'],
  });

export type BrokerConfig = z.infer<typeof brokerConfigSchema>;
export type EndpointConfig = BrokerConfig['endpoints'][number];
export type AuthPolicyConfig = EndpointConfig['auth'];
export type AuthCarrier = z.infer<typeof carrier>;
export type MqttConfig = BrokerConfig['mqtt'];
export type JwtConfig = NonNullable<BrokerConfig['jwt']>;
export type StoreConfig = BrokerConfig['store'];
export type AdminConfig = BrokerConfig['admin'];
export type OcppConfig = BrokerConfig['ocpp'];
export type ClusterConfig = BrokerConfig['cluster'];
/** A configuration as written (YAML, JSON or an application's object): defaults not yet applied. */
export type BrokerConfigInput = z.input<typeof brokerConfigSchema>;
