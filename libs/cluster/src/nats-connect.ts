import { type ClusterConfig } from '#broker/config';
import { type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

/** A node's two NATS connections: `nc` without echo, `queues` with it (for queue subscriptions). */
export interface NodeConnections {
  readonly nc: NatsConnection;
  readonly queues: NatsConnection;
}

/** Opens both connections; rejects (and leaves nothing open) when NATS does not answer. */
export async function connectNode(config: ClusterConfig, nodeId: string): Promise<NodeConnections> {
  const servers = config.natsUrl ?? [];
  const options = {
    servers,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    // A node cut off from NATS notices within about nodeTimeoutMs, as the others notice it.
    pingInterval: Math.min(10_000, Math.max(500, Math.floor(config.nodeTimeoutMs / 2))),
    maxPingOut: 2,
    timeout: config.requestTimeoutMs,
    // Without it the client builds two Error objects, stacks and all, for every request (each
    // JetStream publish): a third of a stored MQTT message's CPU on the publishing node, for a stack
    // that only says which request timed out. Our logs name the operation themselves.
    noAsyncTraces: true,
  };
  let nc: NatsConnection;
  let queues: NatsConnection;
  try {
    // A node never receives its own bus messages back: local delivery already happened in process.
    nc = await connect({ ...options, name: `${config.name}/${nodeId}`, noEcho: true });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${servers.join(', ')}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  try {
    // Queue subscriptions hear this node's own messages too: NATS picks the member, this node's or not.
    queues = await connect({ ...options, name: `${config.name}/${nodeId}/queues` });
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw new Error(`cannot reach NATS at ${servers.join(', ')}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return { nc, queues };
}
