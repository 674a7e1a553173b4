import { type MiddlewareConsumer, Module, type NestModule } from '@nestjs/common';
import { DiscoveryModule, HttpAdapterHost } from '@nestjs/core';
import { TopicAuthorizer } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { ConnectionOpener } from '../connections/connection-opener.js';
import { ConnectionRegistry } from '../connections/connection-registry.js';
import { EndpointRegistry } from '../upgrade/endpoint-registry.js';
import { GatewayAdapterCheck } from './gateway-adapter-check.js';
import { GatewayLifecycle } from './gateway-lifecycle.js';
import { HealthChecks } from '../observability/health-checks.js';
import { Heartbeat } from '../connections/heartbeat.js';
import { BROKER_CONFIG } from '../upgrade/tokens.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { OpsRoutes } from './ops-routes.js';
import { refuseWhileDraining } from '../http-front/draining-requests.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { HandshakeGuards } from '../upgrade/handshake-guards.js';
import { TokenVerifier } from '../upgrade/token-verifier.js';
import { UpgradeGateway } from '../upgrade/upgrade-gateway.js';
import { WsHandoff } from '../upgrade/ws-handoff.js';

/**
 * The handshake gateway: registries, the upgrade handler, heartbeats, drain, and /health and
 * /metrics, and the one topic authorizer every protocol module asks. It reads BROKER_CONFIG,
 * BROKER_LOGGER and BROKER_OPS, which BrokerModule provides.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    SubprotocolRegistry,
    EndpointRegistry,
    ConnectionRegistry,
    ConnectionOpener,
    TokenVerifier,
    HandshakeGuards,
    GatewayMetrics,
    HealthChecks,
    Heartbeat,
    UpgradeGateway,
    WsHandoff,
    GatewayLifecycle,
    GatewayAdapterCheck,
    OpsRoutes,
    {
      provide: TopicAuthorizer,
      inject: [BROKER_CONFIG],
      useFactory: (config: BrokerConfig) => new TopicAuthorizer(config.authorization),
    },
  ],
  exports: [
    TopicAuthorizer,
    ConnectionRegistry,
    EndpointRegistry,
    SubprotocolRegistry,
    TokenVerifier,
    HandshakeGuards,
    GatewayMetrics,
    HealthChecks,
  ],
})
export class GatewayModule implements NestModule {
  constructor(
    private readonly gateway: UpgradeGateway,
    private readonly ops: OpsRoutes,
    private readonly connections: ConnectionRegistry,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /**
   * The probes, and plain GETs on endpoint paths (the diagnostic page), before any route of the
   * application's. Mounted on the HTTP adapter itself, at the moment Nest mounts module middleware
   * (before the routes): through the consumer they would be mounted under a path, which rewrites
   * `req.url`, and under the application's global prefix, which endpoint paths do not carry.
   */
  configure(_consumer: MiddlewareConsumer): void {
    this.adapterHost.httpAdapter.use(this.gateway.inOrder);
    this.adapterHost.httpAdapter.use(this.ops.handle);
    this.adapterHost.httpAdapter.use(refuseWhileDraining(this.connections));
    this.adapterHost.httpAdapter.use(this.gateway.handleRequest);
  }
}
