import { ConfigSection, inputBudget, timerMs } from '#broker/config';
import { z } from 'zod';

// The `mqtt` key of the broker's configuration: the TCP listener, limits, sessions. The MQTT module
// declares it (`BrokerSection`).

const mqtt = z
  .object({
    /** MQTT over plain TCP for devices without WebSocket: null is off, 0 an ephemeral port. */
    tcpPort: z.number().int().min(0).max(65535).nullable().default(null),
    tcpHost: z.string().default('0.0.0.0'),
    /** TCP has no handshake: when true, CONNECT must carry a credential. */
    tcpAuthRequired: z.boolean().default(false),
    /** A TCP client's share of the event loop, as an endpoint's inputBudget is for WebSocket clients. */
    tcpInputBudget: inputBudget.default(false),
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
    /** Several nodes (the broker's `cluster` key): MQTT's QoS 1/2 stream. */
    cluster: z
      .object({
        /**
         * How long a message in flight to a client may stay unacknowledged before the stream gives it
         * to the next reader (after its node died, say), with DUP set.
         */
        ackWaitMs: timerMs.default(30_000),
        /**
         * Bytes the message stream may hold (JetStream reserves them); past it a QoS 1/2 publish is
         * refused (PUBACK 0x97) rather than an acknowledged message dropped. 0: no limit, which lets
         * the stream fill JetStream's storage and stop session writes too: set it below the server's.
         */
        streamMaxBytes: z.number().int().nonnegative().default(0),
      })
      .strict()
      .default({ ackWaitMs: 30_000, streamMaxBytes: 0 }),
    /** Topic rules apply to every protocol now: the section is `authorization`. */
    acl: z
      .never({
        error: 'moved to authorization: one rule set for every protocol (docs/security.md, Authorization)',
      })
      .optional(),
  })
  .strict();

export type MqttConfig = z.infer<typeof mqtt>;

export const mqttConfig = new ConfigSection('mqtt', mqtt.default(mqtt.parse({})));
