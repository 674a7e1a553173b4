import { type AddressInfo } from 'node:net';
import { type DynamicModule, type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { brokerHttpsOptions } from '../http-front/tls-options.js';
import { NestPinoLogger } from '../observability/logger.js';

export interface RunningBroker {
  readonly app: INestApplication;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A shortcut for what an application's own main.ts does (NestFactory.create, listen on the config's
 * host and port): Nest's lines into the broker's logger, TLS from the config, Nest's body parser off
 * (the admin API parses its own bodies, with its own limit and problem+json errors), and with
 * `exitOnSignals` a drain and exit 0 on SIGTERM or SIGINT. Boot errors (duplicate module, unknown
 * module, bad key file) reject before listening.
 */
export async function startBroker(
  appModule: Type | DynamicModule,
  config: BrokerConfig,
  logger: Logger,
  options: {
    readonly exitOnSignals?: boolean;
    /** Mounts what needs the application object (the admin API's OpenAPI page) before listening. */
    readonly setup?: (app: INestApplication) => void;
  } = {},
): Promise<RunningBroker> {
  const app = await NestFactory.create(appModule, {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
    bodyParser: false,
    ...(config.tls ? { httpsOptions: brokerHttpsOptions(config.tls, config.http) } : {}),
  });
  (app.getHttpAdapter().getInstance() as { disable(setting: string): void }).disable('x-powered-by');
  options.setup?.(app);
  if (options.exitOnSignals) app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const scheme = config.tls ? 'wss' : 'ws';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info({ url: `${scheme}://${host}:${address.port}`, ...servedBy(config) }, 'broker listening');
  return { app, port: address.port, url: `${scheme}://127.0.0.1:${address.port}`, close: () => app.close() };
}

/** What the start-up line says besides the address: the endpoints and where state and peers are. */
function servedBy(config: BrokerConfig): Record<string, unknown> {
  return {
    endpoints: config.endpoints.map((e) => `${e.path} (${e.subprotocols.join(', ')})`),
    // The database's address may hold its password: only which store it is.
    store: config.store.databaseUrl === undefined ? `sqlite ${config.store.sqlitePath}` : 'postgresql',
    ...(config.cluster.natsUrl === undefined
      ? {}
      : { cluster: config.cluster.name, natsServers: config.cluster.natsUrl.length }),
  };
}
