import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startBrokerServer, startNodeServer, type ServerProcess } from '../child-servers.js';
import { brokerBaseConfig } from '../broker-config.js';

/** `ocpp-rpc+sqlite`: ocpp-rpc answering MeterValues once stored durably, as the broker does. */
export type OcppServerKind = 'broker' | 'ocpp-rpc' | 'ocpp-rpc+sqlite';

export interface OcppServer {
  readonly kind: OcppServerKind;
  readonly process: ServerProcess;
  /** Charge points connect to `${baseUrl}/<identity>`. */
  readonly baseUrl: string;
}

export async function startOcppServer(kind: OcppServerKind, dir: string): Promise<OcppServer> {
  const port = await freePort();
  const baseUrl = `ws://127.0.0.1:${port}/ocpp`;
  if (kind === 'broker') {
    const file = join(dir, `broker-${port}.json`);
    await writeFile(file, JSON.stringify(brokerOcppConfig(port, join(dir, `broker-${port}.db`))));
    return { kind, process: await startBrokerServer(file, port), baseUrl };
  }
  const script = fileURLToPath(new URL('./ocpp-rpc-server.js', import.meta.url));
  const env: Record<string, string> = { PORT: String(port) };
  if (kind === 'ocpp-rpc+sqlite') env['STORE'] = join(dir, `ocpp-rpc-${port}.db`);
  return { kind, process: await startNodeServer(kind, script, env, port), baseUrl };
}

/**
 * The broker as benchmarked: the default OCPP endpoint and `ocpp` settings (unknown charge points
 * allowed, every boot accepted, 30 s WebSocket pings like ocpp-rpc's), the SQLite store in the run's
 * temp dir, connection limits out of the way.
 */
export function brokerOcppConfig(port: number, sqlitePath: string): object {
  return {
    ...brokerBaseConfig(port),
    store: { sqlitePath },
    endpoints: [{ path: '/ocpp/:chargePointId', subprotocols: ['ocpp1.6'], defaultModule: 'ocpp1.6' }],
  };
}
