/**
 * The broker's own entry point (src/main.ts) with one application handshake guard, for the handshake
 * benchmark's `--guard`: a tenant rule as an application writes one, an injected service asked about
 * the verified token's `tenant` claim, so the figure is the cost of the guard machinery, not of I/O.
 */
import { Injectable, Module } from '@nestjs/common';
import {
  createLogger,
  HandshakeGuard,
  type HandshakeGuardContext,
  type HandshakeGuardHandler,
  loadConfig,
  startBroker,
} from 'ws-protocol-broker';
import { AppModule } from '../../../src/app.module.js';
import { DEFAULT_CONFIG } from '../../../src/default-config.js';

@Injectable()
export class Tenants {
  private readonly closed = new Set(['closed']);

  isOpen(tenant: string): boolean {
    return !this.closed.has(tenant);
  }
}

@HandshakeGuard()
export class TenantGuard implements HandshakeGuardHandler {
  constructor(private readonly tenants: Tenants) {}

  canActivate(context: HandshakeGuardContext): boolean {
    return this.tenants.isOpen(String(context.principal?.claims['tenant'] ?? ''));
  }
}

@Module({ providers: [Tenants, TenantGuard] })
export class TenantGuardModule {}

const config = loadConfig({ defaults: DEFAULT_CONFIG });
const logger = createLogger(config.log.level);
await startBroker({ module: TenantGuardModule, imports: [AppModule.with(config, logger)] }, config, logger, {
  exitOnSignals: true,
});
