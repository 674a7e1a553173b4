import { type AddressInfo } from 'node:net';
import { type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { BrokerHttpAdapter } from './broker-http-adapter.js';
import { flushAndExit, NestPinoLogger } from './logger.js';
import { UpgradeGateway } from './upgrade-gateway.js';

export interface RunningBroker {
  readonly app: INestApplication;
  readonly port: number;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Boots an application module (which imports GatewayModule.forRoot and its subprotocol modules)
 * and listens. Boot errors (duplicate module, unknown module, bad key file) reject before listening.
 */
export async function startBroker(
  appModule: Type | ReturnType<typeof Object>,
  config: BrokerConfig,
  logger: Logger,
  options: {
    readonly exitOnSignals?: boolean;
    /** Mounts what needs the application object (the admin API's OpenAPI page) before listening. */
    readonly setup?: (app: INestApplication) => void;
  } = {},
): Promise<RunningBroker> {
  const app = await NestFactory.create(appModule, new BrokerHttpAdapter(config), {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
    // Bodies are parsed only where an API takes them (the admin module), with its own limit and errors.
    bodyParser: false,
  });
  const gateway = app.get(UpgradeGateway);
  app.use(gateway.handleRequest);
  options.setup?.(app);
  if (options.exitOnSignals) exitOnSignals(app, logger);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const scheme = config.tls ? 'wss' : 'ws';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info({ url: `${scheme}://${host}:${address.port}` }, 'broker listening');
  return { app, port: address.port, url: `${scheme}://127.0.0.1:${address.port}`, close: () => app.close() };
}

/**
 * SIGTERM/SIGINT: drain (new upgrades 503, close 1001), then exit 0. Nest's enableShutdownHooks
 * would re-raise the signal instead, which orchestrators report as a crash.
 */
function exitOnSignals(app: INestApplication, logger: Logger): void {
  const stop = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => flushAndExit(logger, 0),
      (err: Error) => {
        logger.error({ err: err.message }, 'shutdown failed');
        flushAndExit(logger, 1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
