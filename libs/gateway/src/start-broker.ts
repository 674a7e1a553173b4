import { type AddressInfo } from 'node:net';
import { type INestApplication, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { BrokerHttpAdapter } from './broker-http-adapter.js';
import { NestPinoLogger } from './logger.js';
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
): Promise<RunningBroker> {
  const app = await NestFactory.create(appModule, new BrokerHttpAdapter(config), {
    logger: new NestPinoLogger(logger),
    abortOnError: false,
  });
  const gateway = app.get(UpgradeGateway);
  app.use(gateway.handleRequest);
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as AddressInfo;
  const scheme = config.tls ? 'wss' : 'ws';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info({ url: `${scheme}://${host}:${address.port}` }, 'broker listening');
  return { app, port: address.port, url: `${scheme}://127.0.0.1:${address.port}`, close: () => app.close() };
}
