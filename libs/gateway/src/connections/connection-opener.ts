import { type Duplex } from 'node:stream';
import { AddressDebts } from '../http-front/address-debts.js';
import { systemClock } from '#broker/kit';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { PASSWORD_CHECK, type PasswordCheck } from '#broker/auth';
import { type Accept } from '#broker/handshake';
import { type Logger } from 'pino';
import { type WebSocket } from 'ws';
import { ConnectionRegistry } from './connection-registry.js';
import { EndpointRegistry } from '../upgrade/endpoint-registry.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { OpenConnection, type OpenConnectionServices } from './open-connection.js';
import { SubprotocolRegistry } from './subprotocol-registry.js';
import { TokenVerifier } from '../upgrade/token-verifier.js';
import { BROKER_LOGGER } from '../upgrade/tokens.js';

/**
 * Everything after the 101: each accepted socket becomes an OpenConnection, which wraps it for the
 * module, tracks it, enforces the message-type policy, holds it for first-message authentication
 * when the handshake asked for that, and cleans up on close. Modules never see `ws`.
 */
@Injectable()
export class ConnectionOpener {
  private readonly services: OpenConnectionServices;

  constructor(
    connections: ConnectionRegistry,
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly metrics: GatewayMetrics,
    verifier: TokenVerifier,
    @Inject(BROKER_LOGGER) logger: Logger,
    // Provided by the store; without it no user name and password is accepted.
    @Optional() @Inject(PASSWORD_CHECK) passwords: PasswordCheck | null = null,
  ) {
    const checks = { verifyToken: (token: string) => verifier.verify(token, 'first-message'), passwords };
    this.services = { registry: connections, checks, logger, debts: new AddressDebts(systemClock) };
  }

  open(ws: WebSocket, socket: Duplex, decision: Accept, remoteAddress: string): void {
    const module = this.subprotocols.get(decision.module);
    if (module === undefined) throw new Error(`module ${decision.module} vanished`);
    const metrics = this.metrics.forConnection(decision.endpoint.path, decision.protocol ?? decision.module);
    new OpenConnection(
      ws,
      socket,
      decision,
      module,
      remoteAddress,
      this.endpoints.configOf(decision.endpoint),
      metrics,
      this.services,
    ).open(decision.awaitFirstMessageAuth);
  }
}
