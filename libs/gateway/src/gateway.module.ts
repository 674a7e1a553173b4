import { type DynamicModule, Global, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { ConnectionOpener } from './connection-opener.js';
import { ConnectionRegistry } from './connection-registry.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { GatewayLifecycle } from './gateway-lifecycle.js';
import { HealthChecks } from './health-checks.js';
import { Heartbeat } from './heartbeat.js';
import { GatewayMetrics } from './metrics.js';
import { OpsController } from './ops.controller.js';
import { SubprotocolRegistry } from './subprotocol-registry.js';
import { TokenVerifier } from './token-verifier.js';
import { BROKER_CONFIG, BROKER_LOGGER } from './tokens.js';
import { UpgradeGateway } from './upgrade-gateway.js';

@Global()
@Module({})
export class GatewayModule {
  static forRoot(config: BrokerConfig, logger: Logger): DynamicModule {
    return {
      module: GatewayModule,
      imports: [DiscoveryModule],
      controllers: [OpsController],
      providers: [
        { provide: BROKER_CONFIG, useValue: config },
        { provide: BROKER_LOGGER, useValue: logger },
        SubprotocolRegistry,
        EndpointRegistry,
        ConnectionRegistry,
        ConnectionOpener,
        TokenVerifier,
        GatewayMetrics,
        HealthChecks,
        Heartbeat,
        UpgradeGateway,
        GatewayLifecycle,
      ],
      exports: [
        BROKER_CONFIG,
        BROKER_LOGGER,
        ConnectionRegistry,
        EndpointRegistry,
        SubprotocolRegistry,
        TokenVerifier,
        GatewayMetrics,
        HealthChecks,
      ],
    };
  }
}
