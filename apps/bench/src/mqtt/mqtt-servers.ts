import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokerBaseConfig } from '../broker-config.js';
import {
  freePort,
  spawnServer,
  startBrokerServer,
  startNodeServer,
  type ServerProcess,
} from '../child-servers.js';

export const MOSQUITTO = '/usr/sbin/mosquitto';

export type MqttServerKind = 'broker' | 'mosquitto' | 'aedes';
export const MQTT_SERVER_KINDS: readonly MqttServerKind[] = ['broker', 'mosquitto', 'aedes'];

export interface MqttServer {
  readonly kind: MqttServerKind;
  readonly process: ServerProcess;
  readonly url: string;
}

/** Starts one server under test; `dir` is a temp dir of the run for config files (removed on exit). */
export async function startMqttServer(kind: MqttServerKind, dir: string): Promise<MqttServer> {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/mqtt`;
  if (kind === 'broker') {
    const file = join(dir, `broker-${port}.json`);
    await writeFile(file, JSON.stringify(brokerMqttConfig(port, join(dir, `broker-${port}.db`))));
    return { kind, process: await startBrokerServer(file, port), url };
  }
  if (kind === 'mosquitto') {
    const file = join(dir, `mosquitto-${port}.conf`);
    await writeFile(file, mosquittoConfig(await freePort(), port));
    return { kind, process: await spawnServer('mosquitto', MOSQUITTO, ['-c', file], {}, port), url };
  }
  const script = fileURLToPath(new URL('./aedes-server.js', import.meta.url));
  return { kind, process: await startNodeServer('aedes', script, { PORT: String(port) }, port), url };
}

/**
 * The broker as benchmarked: the default /mqtt endpoint (no auth), MQTT settings at their defaults
 * (maxInflight 32, maxQueuedMessages 1000), limits out of the way, no WebSocket pings (MQTT has its
 * own keep-alive; Mosquitto and Aedes send none either), the store in the run's temp dir.
 */
export function brokerMqttConfig(port: number, sqlitePath: string): object {
  return {
    ...brokerBaseConfig(port),
    store: { sqlitePath },
    endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'], defaultModule: 'mqtt', pingIntervalMs: 0 }],
  };
}

/**
 * Mosquitto 2.0.11 with its defaults (max_inflight_messages 20, max_queued_messages 1000), logging
 * to stdout, which the harness sends to /dev/null like the broker's. This build opens its
 * websockets listener only when a plain listener is configured before it, hence the first one.
 */
export function mosquittoConfig(plainPort: number, wsPort: number): string {
  return [
    'per_listener_settings false',
    'allow_anonymous true',
    'persistence false',
    'log_dest stdout',
    `listener ${plainPort} 127.0.0.1`,
    `listener ${wsPort} 127.0.0.1`,
    'protocol websockets',
    '',
  ].join('\n');
}
