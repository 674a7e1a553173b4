import assert from 'node:assert/strict';
import { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { type CanActivate, Controller, Get, Injectable, type LoggerService, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { NestFactory } from '@nestjs/core';
import { mountAdminOpenApi } from '#broker/admin';
import { BrokerModule } from '#broker/broker';
import { type BrokerConfigInput } from '#broker/config';
import { HealthChecks } from '#broker/gateway';
import { BrokerHealthIndicator } from '#broker/terminus';
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
    return settings();
  }
}

function settings(): BrokerConfigInput {
  return { jwt: { secret: JWT_SECRET }, store: { sqlitePath: ':memory:' }, endpoints: ENDPOINTS };
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

  it('under a global prefix, and with adminApi: false: the endpoints and probes keep their paths, the admin API is gone', async () => {
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
      assert.equal((await fetch(`${base}/health`)).status, 200, 'the probes keep their paths too');
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

  it('the probes answer ahead of the application: an app-wide guard that refuses everything does not block them', async () => {
    @Injectable()
    class DenyAll implements CanActivate {
      canActivate(): boolean {
        return false;
      }
    }
    @Controller('mine')
    class Mine {
      @Get()
      mine(): string {
        return 'mine';
      }
    }
    @Module({
      imports: [BrokerModule.forRoot({ ...settings(), logger }), ChatModule],
      controllers: [Mine],
      providers: [{ provide: APP_GUARD, useClass: DenyAll }],
    })
    class App {}
    const { app, base } = await listen(App);
    try {
      assert.equal((await fetch(`${base}/mine`)).status, 403, 'the guard is in force');
      assert.equal((await fetch(`${base}/health`)).status, 200);
      assert.equal((await fetch(`${base}/health/ready`)).status, 200);
      const metrics = await fetch(`${base}/metrics`);
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /# TYPE /);
    } finally {
      await app.close();
    }
  });

  it('an application route on a probe path stops the boot; moved (healthPath) or off (metricsPath: false), both work', async () => {
    @Controller()
    class OwnHealth {
      @Get('health')
      health(): { mine: true } {
        return { mine: true };
      }
    }
    @Module({
      imports: [BrokerModule.forRoot({ ...settings(), logger }), ChatModule],
      controllers: [OwnHealth],
    })
    class Clashing {}
    await assert.rejects(
      NestFactory.create(Clashing, { logger: false, abortOnError: false }).then((app) => app.init()),
      /OwnHealth\.health answers GET \/health, where the broker's probe answers/,
    );

    @Module({
      imports: [
        BrokerModule.forRoot({ ...settings(), logger, healthPath: '/broker/health', metricsPath: false }),
        ChatModule,
      ],
      controllers: [OwnHealth],
    })
    class Moved {}
    const { app, base } = await listen(Moved);
    try {
      assert.deepEqual(await (await fetch(`${base}/health`)).json(), { mine: true });
      assert.equal((await fetch(`${base}/broker/health`)).status, 200);
      assert.equal((await fetch(`${base}/broker/health/ready`)).status, 200);
      assert.equal((await fetch(`${base}/metrics`)).status, 404);
    } finally {
      await app.close();
    }
  });

  it('without a logger of its own, the broker writes through the application’s Nest logger', async () => {
    const lines: string[] = [];
    const capture: LoggerService = {
      log: (message: unknown) => void lines.push(`log ${String(message)}`),
      warn: (message: unknown) => void lines.push(`warn ${String(message)}`),
      error: (message: unknown) => void lines.push(`error ${String(message)}`),
    };
    @Module({ imports: [BrokerModule.forRoot(settings()), ChatModule] })
    class App {}
    const app = await NestFactory.create(App, { logger: capture, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    try {
      assert.ok(
        lines.some((line) => /^log store opened, migrations applied \{.*"backend":"sqlite"/.test(line)),
        lines.join('\n'),
      );
      assert.ok(lines.some((line) => line.startsWith('warn admin API: no admin token configured')));
    } finally {
      await app.close();
    }
  });

  it('the admin OpenAPI document holds the admin routes under the global prefix, and none of the app’s', async () => {
    @Controller('mine')
    class Mine {
      @Get()
      mine(): string {
        return 'mine';
      }
    }
    @Module({ imports: [BrokerModule.forRoot({ ...settings(), logger }), ChatModule], controllers: [Mine] })
    class App {}
    const app = await NestFactory.create(App, { logger: false, abortOnError: false });
    app.setGlobalPrefix('api');
    mountAdminOpenApi(app);
    await app.listen(0, '127.0.0.1');
    try {
      const port = (app.getHttpServer().address() as AddressInfo).port;
      const doc = (await (await fetch(`http://127.0.0.1:${port}/admin/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      const paths = Object.keys(doc.paths);
      assert.ok(paths.includes('/api/admin/v1/endpoints'), paths.join(' '));
      assert.ok(!paths.some((path) => path.includes('mine')), paths.join(' '));
    } finally {
      await app.close();
    }
  });

  it('the dashboard under the global prefix: its page, its files and its feed beside the admin API', async () => {
    @Module({ imports: [BrokerModule.forRoot({ ...settings(), logger }), ChatModule] })
    class App {}
    const app = await NestFactory.create(App, { logger: false, abortOnError: false });
    app.setGlobalPrefix('api');
    await app.listen(0, '127.0.0.1');
    const feed = new AbortController();
    try {
      const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/api`;
      const redirect = await fetch(`${base}/dashboard`, { redirect: 'manual' });
      assert.equal(redirect.headers.get('location'), 'dashboard/');
      const html = await (await fetch(`${base}/dashboard/`)).text();
      const script = /src="\.\/(assets\/[^"]+)"/.exec(html)?.[1];
      assert.ok(script !== undefined, html);
      assert.equal((await fetch(`${base}/dashboard/${script}`)).status, 200);
      // The page's own '../admin/v1/dashboard/feed' from <prefix>/dashboard/; no token: loopback.
      const res = await fetch(new URL('../admin/v1/dashboard/feed', `${base}/dashboard/`), {
        signal: feed.signal,
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    } finally {
      feed.abort();
      await app.close();
    }
  });

  it('BrokerHealthIndicator reports the broker in the application’s own terminus health check', async () => {
    @Controller('status')
    class Status {
      constructor(
        private readonly health: HealthCheckService,
        private readonly broker: BrokerHealthIndicator,
      ) {}
      @Get()
      @HealthCheck()
      check() {
        return this.health.check([() => this.broker.isHealthy()]);
      }
    }
    @Module({
      imports: [BrokerModule.forRoot({ ...settings(), logger }), ChatModule, TerminusModule],
      controllers: [Status],
      providers: [BrokerHealthIndicator],
    })
    class App {}
    const { app, base } = await listen(App);
    try {
      const up = await fetch(`${base}/status`);
      assert.equal(up.status, 200);
      const body = (await up.json()) as {
        status: string;
        info: Record<string, { status: string; services: object }>;
      };
      assert.equal(body.status, 'ok');
      assert.equal(body.info['broker']?.status, 'up');
      assert.deepEqual(body.info['broker']?.services, { store: 'up' });
      app.get(HealthChecks).add('upstream', {
        check: () => Promise.reject(new Error('unreachable')),
      });
      const down = await fetch(`${base}/status`);
      assert.equal(down.status, 503);
      const failed = (await down.json()) as { error: Record<string, { status: string }> };
      assert.equal(failed.error['broker']?.status, 'down');
    } finally {
      await app.close();
    }
  });
});
