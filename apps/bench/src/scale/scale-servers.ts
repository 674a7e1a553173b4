import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBrokerConfig } from '../broker-config.js';
import { freePort, startBrokerServer } from '../child-servers.js';
import { brokerMqttConfig, startMqttServer, type MqttServer } from '../mqtt/mqtt-servers.js';
import { type ScaleServer } from './scale-options.js';

/**
 * The broker as benchmarked here: /mqtt (mqtt module) and /chat (chat.v1 module), both without
 * WebSocket pings (pingIntervalMs 0: Mosquitto sends none, and an idle population must stay idle),
 * the connection limits raised above the population.
 */
export function scaleBrokerConfig(port: number, connections: number): object {
  // Its store is left out: writeBrokerConfig puts one in its own temp folder.
  const { host, endpoints } = brokerMqttConfig(port, '') as { host: string; endpoints: object[] };
  const limit = Math.max(100_000, connections + 1_000);
  return {
    host,
    port,
    limits: { maxConnections: limit, maxConnectionsPerAddress: limit, handshakesPerSecondPerAddress: 0 },
    endpoints: [
      ...endpoints,
      { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1', pingIntervalMs: 0 },
    ],
  };
}

/** A fresh server process of `kind`; Mosquitto's websockets listener serves MQTT on any path. */
export async function startScaleServer(kind: ScaleServer, connections: number): Promise<MqttServer> {
  if (kind === 'mosquitto') {
    const dir = await mkdtemp(join(tmpdir(), 'scale-bench-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return startMqttServer('mosquitto', dir);
  }
  const port = await freePort();
  const file = await writeBrokerConfig(scaleBrokerConfig(port, connections));
  return { kind, process: await startBrokerServer(file, port), url: `ws://127.0.0.1:${port}/mqtt` };
}
