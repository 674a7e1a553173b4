import { type ClusterNode } from '#broker/cluster';
import { type HealthChecks } from '#broker/gateway';
import { type NodeNats, type NodeStore } from './snapshot.types.js';

/**
 * How old the store's last check may be when the nodes table is read before another starts: one
 * `select 1` at most per interval, in the background and within the health check's time limit, and
 * none while nobody reads (a /health/ready probe's checks count too).
 */
export const STORE_CHECK_MS = 5000;

/** This node's NATS connection for the nodes table: `not clustered` on a single node. */
export function natsOf(cluster: ClusterNode | null): NodeNats {
  return cluster === null ? { state: 'not clustered' } : cluster.natsStatus();
}

/** This node's store for the nodes table, from its health check's last outcome; null when it has none. */
export function storeOf(health: HealthChecks, now = Date.now()): NodeStore | null {
  const status = health.status('store', STORE_CHECK_MS);
  if (status === null) return null;
  const { kind, up, checkedAt, lastError } = status;
  return {
    kind,
    working: up,
    checkedAgoMs: checkedAt === null ? null : Math.max(0, now - checkedAt),
    lastError:
      lastError === null ? null : { message: lastError.message, agoMs: Math.max(0, now - lastError.at) },
  };
}
