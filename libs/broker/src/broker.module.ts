import { Module } from '@nestjs/common';
import { ConfigurableBrokerModule } from './broker.module-definition.js';

/**
 * The broker in an application: `BrokerModule.forRoot(config)` or `forRootAsync({ inject,
 * useFactory })` with the broker's config (the keys of its YAML file, validated at boot: a bad key
 * stops the boot with the key named), plus `adminApi: false`, `dashboard: false` or `logger` beside it. The gateway takes
 * the application's HTTP server; the protocol modules are imported next to it, only those wanted.
 */
@Module({})
export class BrokerModule extends ConfigurableBrokerModule {}
