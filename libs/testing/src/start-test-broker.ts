import { type DynamicModule, type INestApplication, Module, type Type } from '@nestjs/common';
import { BrokerModule } from '#broker/broker';
import { type BrokerConfigInput, parseConfig } from '#broker/config';
import { BrokerWsAdapter, createLogger, startBroker } from '#broker/gateway';
import { type DestinationStream } from 'pino';

export interface TestBrokerOptions {
  /** The broker config; port 0 (ephemeral), host 127.0.0.1 and an in-memory store unless given. */
  readonly config: BrokerConfigInput;
  /** The application's modules: its @Subprotocol providers, gateways, controllers. */
  readonly imports?: readonly (Type | DynamicModule)[];
  /** Where the log lines go (default: nowhere). */
  readonly log?: DestinationStream;
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
  const config = parseConfig({
    host: '127.0.0.1',
    port: 0,
    ...options.config,
    store: { sqlitePath: ':memory:', ...options.config.store },
  });
  const logger = createLogger(config.log.level, options.log ?? { write: () => undefined });
  const module: DynamicModule = {
    module: TestBrokerApp,
    imports: [BrokerModule.forRoot({ ...config, logger }), ...(options.imports ?? [])],
  };
  return startBroker(module, config, logger, {
    setup: (app) => app.useWebSocketAdapter(new BrokerWsAdapter(app)),
  });
}
