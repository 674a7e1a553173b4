import { z } from 'zod';
import { timerMs } from './schema-units.js';

// The `cluster` section: several nodes on NATS.

/** A NATS subject token of ours: the cluster's name and a node's id both become one. */
const subjectToken = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, - or _');

/** Several nodes acting as one broker over NATS; on when natsUrl is set. See docs/cluster.md. */
export const cluster = z
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
     * Copies JetStream keeps of every bucket and stream the cluster makes: 3 on a NATS cluster of three
     * or more servers, so that an acknowledged message survives a NATS server's loss; 1 on a single server.
     */
    replicas: z.number().int().min(1).max(5).default(1),
  })
  .strict()
  .refine((c) => c.nodeTimeoutMs > 2 * c.heartbeatMs, {
    message: 'must be more than twice heartbeatMs, or a live node would look dead',
    path: ['nodeTimeoutMs'],
  });
