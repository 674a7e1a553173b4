import { Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  ORIGIN_ENTRIES,
  PASSWORD_CHECK,
  STORED_TOKENS,
  type PasswordCheck,
  type StoredTokenCheck,
} from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG, BROKER_LOGGER, HealthChecks } from '#broker/gateway';
import { type Logger } from 'pino';
import { BrokerStore } from './broker-store.js';
import { OriginCache } from './origin-cache.js';

class StoreLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(BrokerStore) private readonly store: BrokerStore,
    @Inject(OriginCache) private readonly origins: OriginCache,
    @Inject(HealthChecks) private readonly health: HealthChecks,
  ) {}

  onModuleInit(): void {
    this.health.add('store', { kind: this.store.backend, check: () => this.store.ping() });
  }

  async onApplicationShutdown(): Promise<void> {
    this.origins.stop();
    await this.store.close();
  }
}

/**
 * The persistent store, global so the gateway, the admin API and protocol modules share it. It also
 * fills the auth ports the gateway reads: stored API tokens, passwords and run-time origin entries.
 */
@Global()
@Module({
  providers: [
    {
      provide: BrokerStore,
      inject: [BROKER_CONFIG, BROKER_LOGGER],
      useFactory: async ({ store: config }: BrokerConfig, logger: Logger) => {
        const store = await BrokerStore.open(config);
        const where = store.backend === 'sqlite' ? config.sqlitePath : 'PostgreSQL (DATABASE_URL)';
        logger.info({ backend: store.backend, where }, 'store opened, migrations applied');
        return store;
      },
    },
    {
      provide: OriginCache,
      inject: [BrokerStore, BROKER_CONFIG, BROKER_LOGGER],
      useFactory: async (store: BrokerStore, { store: config }: BrokerConfig, logger: Logger) => {
        const cache = new OriginCache(store.origins, logger);
        // SQLite has one writer, this process; PostgreSQL may be shared, so poll for other nodes' changes.
        await cache.start(store.backend === 'postgres' ? config.refreshIntervalMs : null);
        return cache;
      },
    },
    { provide: ORIGIN_ENTRIES, useExisting: OriginCache },
    {
      provide: STORED_TOKENS,
      inject: [BrokerStore],
      useFactory: (store: BrokerStore): StoredTokenCheck => ({
        recognizes: (token) => store.credentials.recognizes(token),
        verify: (token) => store.credentials.verifyToken(token),
      }),
    },
    {
      provide: PASSWORD_CHECK,
      inject: [BrokerStore],
      useFactory: (store: BrokerStore): PasswordCheck => ({
        verifyPassword: (username, password) => store.credentials.verifyPassword(username, password),
      }),
    },
    StoreLifecycle,
  ],
  exports: [BrokerStore, OriginCache, ORIGIN_ENTRIES, STORED_TOKENS, PASSWORD_CHECK],
})
export class StoreModule {}
