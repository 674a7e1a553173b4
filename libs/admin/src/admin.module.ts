import {
  Inject,
  Module,
  type DynamicModule,
  type MiddlewareConsumer,
  type NestModule,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG, BROKER_LOGGER } from '#broker/gateway';
import { type Logger } from 'pino';
import { AdminAuthGuard } from './admin-auth.guard.js';
import { AuditController } from './audit.controller.js';
import { ConnectionDirectory } from './connection-directory.js';
import { ConnectionsController } from './connections.controller.js';
import { CredentialsController } from './credentials.controller.js';
import { EndpointsController } from './endpoints.controller.js';
import { jsonBody } from './json-body.middleware.js';
import { LookupsController } from './lookups.controller.js';
import { OriginsController } from './origins.controller.js';
import { PublishController } from './publish.controller.js';
import { TraceDirectory } from './traces/trace-directory.js';
import { TraceRecorder } from './traces/trace-recorder.js';
import { TracesController } from './traces/traces.controller.js';

/** The REST admin API under /admin/v1 (needs GatewayModule and StoreModule in the application). */
@Module({
  controllers: [
    EndpointsController,
    OriginsController,
    CredentialsController,
    ConnectionsController,
    PublishController,
    AuditController,
    LookupsController,
    TracesController,
  ],
  providers: [AdminAuthGuard, ConnectionDirectory, TraceRecorder, TraceDirectory],
})
export class AdminModule implements NestModule, OnApplicationBootstrap {
  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  static forRoot(): DynamicModule {
    return { module: AdminModule };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(jsonBody(this.config.admin.maxBodyBytes)).forRoutes('admin/*path');
  }

  onApplicationBootstrap(): void {
    if (this.config.admin.tokens.length === 0) {
      this.logger.warn(
        'admin API: no admin token configured (ADMIN_TOKEN or admin.tokens), so it answers loopback clients only',
      );
    } else {
      this.logger.info({ tokens: this.config.admin.tokens.length }, 'admin API: bearer tokens required');
    }
  }
}
