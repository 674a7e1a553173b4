import { Writable } from 'node:stream';
import { type DynamicModule, type INestApplication, Module, type Type } from '@nestjs/common';
import { mountAdminOpenApi } from '#broker/admin';
import { BrokerModule } from '#broker/broker';
import { loadConfig, type BrokerConfig } from '#broker/config';
import { createLogger, startBroker } from '#broker/gateway';
import { type Logger } from 'pino';
import { ChatModule } from '../../apps/example-chat/src/chat.module.js';
import { AppModule } from '../../src/app.module.js';
import { DEFAULT_CONFIG } from '../../src/default-config.js';
import { TestModulesModule } from './test-modules.js';

export const JWT_SECRET = 'test-secret-that-is-at-least-32-characters-long';

export interface TestBroker {
  /** The running Nest application, for tests that need a provider (the topic bus). */
  readonly app: INestApplication;
  readonly port: number;
  readonly url: string;
  /** Every log line so far, as written (JSON text). */
  logText(): string;
  logLines(): Record<string, unknown>[];
  close(): Promise<void>;
}

@Module({})
class TestAppModule {}

/**
 * Starts the real broker in this process on an ephemeral loopback port (store in memory unless the
 * config names a file), with the admin API, the chat module and the test modules registered, and
 * captures its log stream.
 */
export function startTestBroker(
  config: Record<string, unknown>,
  extraModules: readonly (Type | DynamicModule)[] = [],
  /** What the application's main.ts does between NestFactory.create and listen (useWebSocketAdapter). */
  setup?: (app: INestApplication) => void,
): Promise<TestBroker> {
  return launch(config, setup, (parsed, logger) => ({
    module: TestAppModule,
    imports: [BrokerModule.forRoot({ ...parsed, logger }), ChatModule, TestModulesModule, ...extraModules],
  }));
}

/**
 * The broker exactly as `npm start` composes it (AppModule, every protocol module, the default
 * endpoints), on an ephemeral loopback port with the store in memory; `config` overrides settings.
 */
export function startDefaultBroker(config: Record<string, unknown> = {}): Promise<TestBroker> {
  return launch({ ...DEFAULT_CONFIG, ...config }, undefined, (parsed, logger) =>
    AppModule.with(parsed, logger),
  );
}

async function launch(
  config: Record<string, unknown>,
  setup: ((app: INestApplication) => void) | undefined,
  compose: (parsed: BrokerConfig, logger: Logger) => DynamicModule,
): Promise<TestBroker> {
  const parsed = loadConfig({
    env: {},
    defaults: {
      host: '127.0.0.1',
      port: 0,
      jwt: { secret: JWT_SECRET },
      store: { sqlitePath: ':memory:' },
      ...config,
    },
  });
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString('utf8');
      done();
    },
  });
  const logger = createLogger('info', sink);
  const broker = await startBroker(compose(parsed, logger), parsed, logger, {
    setup: (app) => {
      mountAdminOpenApi(app);
      setup?.(app);
    },
  });
  return {
    app: broker.app,
    port: broker.port,
    url: broker.url,
    logText: () => text,
    logLines: () =>
      text
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    close: () => broker.close(),
  };
}

/** The sum of one counter's series for one endpoint, as /metrics reports it. */
export async function endpointCounter(broker: TestBroker, metric: string, endpoint: string): Promise<number> {
  const text = await (await fetch(`${broker.url.replace(/^ws/, 'http')}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${metric}{`) && l.includes(`endpoint="${endpoint}"`))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

/** broker_messages_dropped_total of one endpoint: events dropped for clients not reading. */
export function droppedEvents(broker: TestBroker, endpoint: string): Promise<number> {
  return endpointCounter(broker, 'broker_messages_dropped_total', endpoint);
}
