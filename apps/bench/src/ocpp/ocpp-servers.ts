import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startBrokerServer, startNodeServer, type ServerProcess } from '../child-servers.js';
import { brokerBaseConfig } from '../broker-config.js';
import { type MeterValueTable } from './stored-check.js';

/** `ocpp-rpc+sqlite`: ocpp-rpc answering MeterValues once stored durably, as the broker does. */
export type OcppServerKind = 'broker' | 'ocpp-rpc' | 'ocpp-rpc+sqlite';

export interface OcppServer {
  readonly kind: OcppServerKind;
  readonly process: ServerProcess;
  /** Charge points connect to `${baseUrl}/<identity>`. */
  readonly baseUrl: string;
  /** Where it stores the sampled values; null for the reference that stores nothing. */
  readonly store: MeterValueTable | null;
}

export async function startOcppServer(kind: OcppServerKind, dir: string): Promise<OcppServer> {
  const port = await freePort();
  const baseUrl = `ws://127.0.0.1:${port}/ocpp`;
  if (kind === 'broker') {
    const file = join(dir, `broker-${port}.json`);
    const path = join(dir, `broker-${port}.db`);
    await writeFile(file, JSON.stringify(brokerOcppConfig(port, path)));
    return {
      kind,
      process: await startBrokerServer(file, port),
      baseUrl,
      store: { path, table: 'ocpp_meter_values' },
    };
  }
  const script = fileURLToPath(new URL('./ocpp-rpc-server.js', import.meta.url));
  const env: Record<string, string> = { PORT: String(port) };
  const store: MeterValueTable | null =
    kind === 'ocpp-rpc+sqlite' ? { path: join(dir, `ocpp-rpc-${port}.db`), table: 'meter_values' } : null;
  if (store !== null) env['STORE'] = store.path;
  return { kind, process: await startNodeServer(kind, script, env, port), baseUrl, store };
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
