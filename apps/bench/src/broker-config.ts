import { rmSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, killChildrenOnExit, startBrokerServer, type ServerProcess } from './child-servers.js';

/** The broker as benchmarked: origin and JWT checks on (`jwt` as given), limits out of the way, no heartbeats. */
export function brokerBenchConfig(port: number, jwt: object, origin: string): object {
  return {
    ...brokerBaseConfig(port),
    jwt,
    endpoints: [
      {
        path: '/chat',
        subprotocols: ['chat.v1'],
        origins: [origin],
        requireOrigin: true,
        auth: { mode: 'required', carriers: ['query', 'header'] },
        pingIntervalMs: 0,
      },
    ],
  };
}

/** Connection limits high enough for thousands of load connections from one address. */
const CONNECTION_LIMITS = { maxConnections: 100_000, maxConnectionsPerAddress: 100_000 };

/** Loopback, and limits out of the way: thousands of load connections, and handshakes, from one address. */
export function brokerBaseConfig(port: number): { host: string; port: number; limits: object } {
  return {
    host: '127.0.0.1',
    port,
    limits: { ...CONNECTION_LIMITS, handshakesPerSecondPerAddress: 0 },
  };
}

/**
 * How the broker meets one costly client: `hardened`, each connection held to its share of the loop
 * (the endpoints' inputBudget, and http.inputBudget for plain requests) and the default handshake
 * rate per address; `defaults`, the settings
 * a broker has unless told otherwise (the handshake rate, no input budget); `none`, limits out of
 * the way as in the throughput benchmarks.
 */
export type Hardening = 'hardened' | 'defaults' | 'none';

/** One broker process with every module on the default paths (the worst-message, slow-consumer and soak modes). */
function everyModuleConfig(port: number, hardening: Hardening): object {
  const budget = hardening === 'hardened' ? { inputBudget: {} } : {};
  return {
    ...brokerBaseConfig(port),
    // The worst-message modes keep the per-address shares a deployment has (silent sockets are an
    // attack of theirs) and serve HTTP/2 beside HTTP/1.1 (rapid reset is another).
    ...(hardening !== 'none'
      ? { limits: { maxConnections: 100_000 }, http: { http2: true, ...budget } }
      : {}),
    endpoints: [
      { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
      { path: '/mqtt', subprotocols: ['mqtt'], defaultModule: 'mqtt' },
      { path: '/graphql', subprotocols: ['graphql-transport-ws'], defaultModule: 'graphql-transport-ws' },
      { path: '/ws', subprotocols: ['wamp.2.json'], defaultModule: 'wamp.2.json' },
      { path: '/ocpp/:chargePointId', subprotocols: ['ocpp1.6'], defaultModule: 'ocpp1.6' },
    ].map((endpoint) => ({ ...endpoint, ...budget })),
  };
}

/** The folders writeBrokerConfig made, removed together on exit. */
const configDirs = new Set<string>();

/**
 * Writes the config to a fresh temporary folder, which also holds the broker's SQLite store, so a
 * run leaves nothing in the checkout. Removed on exit rather than in a finally block: Ctrl-C ends the
 * process without running finally blocks.
 */
export async function writeBrokerConfig(config: object): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'broker-bench-'));
  if (configDirs.size === 0)
    process.once('exit', () => {
      for (const made of configDirs) rmSync(made, { recursive: true, force: true });
    });
  configDirs.add(dir);
  const file = join(dir, 'broker.json');
  await writeFile(file, JSON.stringify({ store: { sqlitePath: join(dir, 'broker.db') }, ...config }));
  return file;
}

/**
 * One broker process with every module on the default paths, on a free port, killed with the
 * benchmark (the worst-message, slow-consumer and soak modes).
 */
export async function startEveryModuleBroker(hardening: Hardening = 'none'): Promise<ServerProcess> {
  killChildrenOnExit();
  const port = await freePort();
  return startBrokerServer(await writeBrokerConfig(everyModuleConfig(port, hardening)), port, {}, 'broker');
}
