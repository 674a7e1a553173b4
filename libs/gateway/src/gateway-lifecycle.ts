import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { type Server } from 'node:http';
import { type Logger } from 'pino';
import { ConnectionRegistry } from './connection-registry.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { Heartbeat } from './heartbeat.js';
import { SubprotocolRegistry } from './subprotocol-registry.js';
import { TokenVerifier } from './token-verifier.js';
import { UpgradeGateway } from './upgrade-gateway.js';
import { BROKER_CONFIG, BROKER_LOGGER } from './tokens.js';

/**
 * Boot and shutdown in one explicit order. Boot: discover modules, compile endpoints against them,
 * import keys, attach to the HTTP server, start heartbeats. Shutdown: refuse new upgrades (503),
 * let modules say goodbye, close 1001, and wait for the drain or the drain timeout.
 */
@Injectable()
export class GatewayLifecycle implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    private readonly adapterHost: HttpAdapterHost,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly endpoints: EndpointRegistry,
    private readonly verifier: TokenVerifier,
    private readonly gateway: UpgradeGateway,
    private readonly heartbeat: Heartbeat,
    private readonly connections: ConnectionRegistry,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subprotocols.discover();
    this.endpoints.compile();
    await this.verifier.init();
    this.gateway.attach(this.adapterHost.httpAdapter.getHttpServer() as Server);
    for (const { spec, config } of this.endpoints.all()) this.heartbeat.start(spec, config.pingIntervalMs);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.connections.draining = true;
    this.heartbeat.stop();
    const open = [...this.connections.all()];
    this.logger.info({ connections: open.length }, 'draining connections');
    for (const { connection, module } of open) {
      try {
        module.handler.goodbye?.(connection);
      } catch (err) {
        this.logger.error({ module: module.options.name, err: (err as Error).message }, 'goodbye failed');
      }
      connection.close(1001, 'server shutting down');
    }
    const deadline = Date.now() + this.config.shutdown.drainTimeoutMs;
    while (this.connections.open() > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    for (const { ws } of this.connections.all()) ws.terminate();
    this.gateway.closeAll();
  }
}
