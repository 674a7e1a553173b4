import assert from 'node:assert/strict';
import { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BrokerModule } from '#broker/broker';
import { type BrokerConfigInput } from '#broker/config';
import { ChatModule } from '../apps/example-chat/src/chat.module.js';
import WebSocket from 'ws';
import { JWT_SECRET } from './support/test-broker.js';
import { logger } from './support/quiet-logger.js';
import { opened } from './support/ws-helpers.js';

const ENDPOINTS = [{ path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' }];

/** Stands for an application's ConfigService. */
@Injectable()
class AppSettings {
  broker(): BrokerConfigInput {
    return { jwt: { secret: JWT_SECRET }, store: { sqlitePath: ':memory:' }, endpoints: ENDPOINTS };
  }
}

@Module({ providers: [AppSettings], exports: [AppSettings] })
class SettingsModule {}

async function listen(module: object, prefix?: string) {
  const app = await NestFactory.create(module as never, { logger: false, abortOnError: false });
  if (prefix !== undefined) app.setGlobalPrefix(prefix);
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  return { app, base: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}` };
}

describe('BrokerModule in a plain Nest application (NestFactory.create, listen)', () => {
  it('forRootAsync takes the config from the application’s own provider and serves the modules', async () => {
    @Module({
      imports: [
        BrokerModule.forRootAsync({
          imports: [SettingsModule],
          inject: [AppSettings],
          useFactory: (settings: AppSettings) => settings.broker(),
          logger,
        }),
        ChatModule,
      ],
    })
    class App {}
    const { app, base, ws } = await listen(App);
    try {
      assert.equal((await fetch(`${base}/health`)).status, 200);
      const client = new WebSocket(`${ws}/chat`, 'chat.v1');
      await opened(client);
      assert.equal(client.protocol, 'chat.v1');
      client.close();
    } finally {
      await app.close();
    }
  });

  it('an invalid config from forRootAsync stops the boot, naming the key', async () => {
    @Module({
      imports: [
        BrokerModule.forRootAsync({
          useFactory: () => ({ endpoints: ENDPOINTS, limits: { maxConnections: -1 } }),
          logger,
        }),
        ChatModule,
      ],
    })
    class App {}
    await assert.rejects(
      NestFactory.create(App, { logger: false, abortOnError: false }),
      /limits\.maxConnections/,
    );
  });

  it('under a global prefix, and with adminApi: false: the endpoints keep their paths, the admin API is gone', async () => {
    @Module({
      imports: [
        BrokerModule.forRoot({
          jwt: { secret: JWT_SECRET },
          store: { sqlitePath: ':memory:' },
          endpoints: ENDPOINTS,
          adminApi: false,
          logger,
        }),
        ChatModule,
      ],
    })
    class App {}
    const { app, base, ws } = await listen(App, 'api');
    try {
      assert.equal((await fetch(`${base}/api/health`)).status, 200);
      const page = await fetch(`${base}/chat`);
      assert.equal(page.status, 200, 'the plain-GET diagnostic answers on the endpoint path itself');
      assert.match(await page.text(), /upgrade/i);
      assert.equal((await fetch(`${base}/api/admin/v1/endpoints`)).status, 404);
      const client = new WebSocket(`${ws}/chat`, 'chat.v1');
      await opened(client);
      client.close();
    } finally {
      await app.close();
    }
  });
});
