import { type DynamicModule, type INestApplication, Module, type Type } from '@nestjs/common';
import { BrokerModule } from '#broker/broker';
import { type BrokerConfigWithSections, type ConfigSection, parseConfig } from '#broker/config';
import { BrokerWsAdapter, createLogger, startBroker } from '#broker/gateway';
import { type DestinationStream } from 'pino';

export interface TestBrokerOptions {
  /**
   * The broker config, and the keys of `sections`; port 0 (ephemeral), host 127.0.0.1 and an in-memory
   * store unless given.
   */
  readonly config: BrokerConfigWithSections;
  /** The application's modules: its @Subprotocol providers, gateways, controllers. */
  readonly imports?: readonly (Type | DynamicModule)[];
  /** Where the log lines go (default: nowhere). */
  readonly log?: DestinationStream;
  /** The config keys the application's modules add. */
  readonly sections?: readonly ConfigSection<unknown>[];
}

export interface StartedTestBroker {
  readonly app: INestApplication;
  readonly port: number;
  /** ws://127.0.0.1:<port> */
  readonly url: string;
  close(): Promise<void>;
}

@Module({})
class TestBrokerApp {}

/**
 * The real broker with the application's modules, on an ephemeral loopback port, BrokerWsAdapter
 * set, for tests that talk to it with real clients.
 */
export async function startTestBroker(options: TestBrokerOptions): Promise<StartedTestBroker> {
  const config = parseConfig(
    {
      host: '127.0.0.1',
      port: 0,
      ...options.config,
      store: { sqlitePath: ':memory:', ...options.config.store },
    },
    options.sections,
  );
  const logger = createLogger(config.log.level, options.log ?? { write: () => undefined });
  const module: DynamicModule = {
    module: TestBrokerApp,
    imports: [
      BrokerModule.forRoot({ ...config, logger, sections: options.sections ?? [] }),
      ...(options.imports ?? []),
    ],
  };
  return startBroker(module, config, logger, {
    setup: (app) => app.useWebSocketAdapter(new BrokerWsAdapter(app)),
  });
}
