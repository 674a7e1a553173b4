import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, spawnServer, type ServerProcess } from '../child-servers.js';

export const NATS_SERVER = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server';

/** nats-servers routed into one NATS cluster, each with JetStream and nats-server's own MQTT over WebSocket. */
export interface NatsMqttCluster {
  /** Each server's NATS client URL, in server order. */
  readonly natsUrls: readonly string[];
  /** Each server's MQTT-over-WebSocket URL (path /mqtt), in server order. */
  readonly mqttUrls: readonly string[];
  readonly processes: readonly ServerProcess[];
}

/**
 * Starts `count` nats-servers (file store in `dir`, JetStream replicas 1 for MQTT's streams and
 * consumers, as the broker's `cluster.replicas` default), routed to each other. Both the broker's nodes
 * and nats-server's MQTT reference use these servers, so they run on the same JetStream.
 */
export async function startNatsMqttCluster(
  count: number,
  dir: string,
  started: ServerProcess[],
  /** QoS 1 messages sent to a subscription and not yet acknowledged (nats-server's own default: 1024). */
  maxAckPending: number,
): Promise<NatsMqttCluster> {
  // Each port probed free and then released: the OS may hand one out twice, so repeats are drawn again.
  const taken = new Set<number>();
  const port = async (): Promise<number> => {
    let next = await freePort();
    while (taken.has(next)) next = await freePort();
    taken.add(next);
    return next;
  };
  const servers: { client: number; route: number; mqtt: number; ws: number }[] = [];
  for (let i = 0; i < count; i++) {
    servers.push({ client: await port(), route: await port(), mqtt: await port(), ws: await port() });
  }
  const processes: ServerProcess[] = [];
  await Promise.all(
    servers.map(async (ports, i) => {
      const store = join(dir, `nats-${i}`);
      await mkdir(store, { recursive: true });
      const routes = servers.filter((_, j) => j !== i).map((other) => `"nats://127.0.0.1:${other.route}"`);
      const file = join(dir, `nats-${i}.conf`);
      await writeFile(
        file,
        [
          `server_name: bench-${i}`,
          `listen: 127.0.0.1:${ports.client}`,
          `jetstream { store_dir: "${store}" }`,
          `cluster { name: bench, listen: 127.0.0.1:${ports.route}, routes: [${routes.join(', ')}] }`,
          `mqtt { listen: 127.0.0.1:${ports.mqtt}, stream_replicas: 1, consumer_replicas: 1, max_ack_pending: ${maxAckPending} }`,
          `websocket { listen: "127.0.0.1:${ports.ws}", no_tls: true }`,
          '',
        ].join('\n'),
      );
      const server = await spawnServer(`nats-server ${i}`, NATS_SERVER, ['-c', file], {}, ports.ws);
      started.push(server);
      processes[i] = server;
    }),
  );
  return {
    natsUrls: servers.map((ports) => `nats://127.0.0.1:${ports.client}`),
    mqttUrls: servers.map((ports) => `ws://127.0.0.1:${ports.ws}/mqtt`),
    processes,
  };
}
