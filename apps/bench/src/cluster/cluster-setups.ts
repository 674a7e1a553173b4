import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, startBrokerServer, type ServerProcess } from '../child-servers.js';
import { brokerMqttConfig } from '../mqtt/mqtt-servers.js';
import { createSchema, type ClusterResources } from './cluster-resources.js';

export type SetupId = 'a' | 'b' | 'c';
export const SETUP_IDS: readonly SetupId[] = ['a', 'b', 'c'];

export const SETUP_LABELS: Readonly<Record<SetupId, string>> = {
  a: '(a) single process',
  b: '(b) cluster, 1 node',
  c: '(c) cluster, 2 nodes',
};

/** Broker processes serving one set-up: publishers connect to one, subscribers to another (or the same). */
export interface Setup {
  readonly id: SetupId;
  readonly label: string;
  readonly publisherUrl: string;
  readonly subscriberUrl: string;
  /** Every broker process of the set-up, for the CPU columns and the cleanup. */
  readonly processes: readonly ServerProcess[];
}

export interface SetupContext {
  /** The run's temp dir: config files and the single process's SQLite store. */
  readonly dir: string;
  /** The run's token, in schema and cluster names. */
  readonly token: string;
  readonly resources: ClusterResources;
}

/**
 * Starts one set-up. Every process gets the MQTT benchmark's broker config (one /mqtt endpoint, limits
 * out of the way, MQTT settings at their defaults); (b) and (c) add a cluster of their own (its own
 * name on the shared NATS, its own PostgreSQL schema), NATS_URL, DATABASE_URL and NODE_ID. Each
 * started process is pushed to `started` at once, so a failure half-way still stops it.
 */
export async function startSetup(
  id: SetupId,
  context: SetupContext,
  started: ServerProcess[],
): Promise<Setup> {
  if (id === 'a') {
    const broker = await startNode(context, `single`, {}, {}, started);
    return setup(id, broker, broker);
  }
  const clusterName = `bench-${context.token}-${id === 'b' ? 'one' : 'two'}`;
  context.resources.clusterNames.push(clusterName);
  const databaseUrl = await createSchema(context.resources, `bench_cluster_${context.token}_${id}`);
  const clusterEnv = (nodeId: string): Record<string, string> => ({
    NATS_URL: context.resources.natsUrls.join(','),
    DATABASE_URL: databaseUrl,
    NODE_ID: nodeId,
  });
  const cluster = { cluster: { name: clusterName } };
  // One at a time: the first node runs the store's migrations, the second finds them done.
  const n1 = await startNode(context, `${id}-n1`, cluster, clusterEnv('n1'), started);
  if (id === 'b') return setup(id, n1, n1);
  const n2 = await startNode(context, `${id}-n2`, cluster, clusterEnv('n2'), started);
  return setup(id, n1, n2);
}

function setup(id: SetupId, publisherNode: Node, subscriberNode: Node): Setup {
  const processes = [...new Set([publisherNode.process, subscriberNode.process])];
  return {
    id,
    label: SETUP_LABELS[id],
    publisherUrl: publisherNode.url,
    subscriberUrl: subscriberNode.url,
    processes,
  };
}

export interface Node {
  readonly process: ServerProcess;
  readonly url: string;
}

/** One broker process with the MQTT benchmark's config plus `extraConfig`; pushed to `started` at once. */
export async function startNode(
  context: Pick<SetupContext, 'dir'>,
  name: string,
  extraConfig: object,
  env: Record<string, string>,
  started: ServerProcess[],
): Promise<Node> {
  const port = await freePort();
  const file = join(context.dir, `${name}.json`);
  const config = {
    ...brokerMqttConfig(port, join(context.dir, `${name}.db`)),
    // No client is left when the benchmark stops a node: no reason to wait the default 10 s.
    shutdown: { drainTimeoutMs: 1000 },
    ...extraConfig,
  };
  await writeFile(file, JSON.stringify(config));
  const process = await startBrokerServer(file, port, env, `broker ${name}`);
  started.push(process);
  return { process, url: `ws://127.0.0.1:${port}/mqtt` };
}
