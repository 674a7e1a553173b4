import { HttpException, Inject, Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { parse as parseCookies } from 'cookie';
import { type BrokerConfig } from '#broker/config';
import { type GuardVerdict, type ModuleCheckContext, type ModuleRefusal } from '#broker/handshake';
import { type Logger } from 'pino';
import { withinTime } from './check-timeout.js';
import {
  HandshakeGuard,
  type HandshakeGuardContext,
  type HandshakeGuardHandler,
  type HandshakeGuardOptions,
  HandshakeRefusal,
} from './handshake-guard.js';
import { BROKER_CONFIG, BROKER_LOGGER } from './tokens.js';

interface Registered {
  readonly options: HandshakeGuardOptions;
  readonly handler: HandshakeGuardHandler;
  readonly name: string;
}

/**
 * The application's @HandshakeGuard providers, found at boot, and their run for one handshake: each
 * guard of the endpoint in turn, all of them within the endpoint's `auth.guardTimeoutMs`.
 */
@Injectable()
export class HandshakeGuards {
  private guards: Registered[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  /** Called once at boot by GatewayLifecycle; a guard naming an endpoint nobody configured stops the boot. */
  discover(): void {
    const paths = new Set(this.config.endpoints.map((endpoint) => endpoint.path));
    for (const wrapper of this.discovery.getProviders({ metadataKey: HandshakeGuard.KEY })) {
      const options = this.discovery.getMetadataByDecorator(HandshakeGuard, wrapper) ?? {};
      const handler = wrapper.instance as HandshakeGuardHandler | undefined;
      if (handler === undefined) continue;
      if (typeof handler.canActivate !== 'function') {
        throw new Error(`@HandshakeGuard() on ${wrapper.name} must implement canActivate()`);
      }
      const unknown = options.endpoints?.find((path) => !paths.has(path));
      if (unknown !== undefined) {
        throw new Error(`@HandshakeGuard() on ${wrapper.name} names ${unknown}, which no endpoint has`);
      }
      this.guards.push({ options, handler, name: wrapper.name });
    }
    this.guards.sort((a, b) => (a.options.order ?? 0) - (b.options.order ?? 0));
  }

  /** Whether any guard is installed (none: the handshake does not call `run`). */
  get any(): boolean {
    return this.guards.length > 0;
  }

  async run(check: ModuleCheckContext): Promise<GuardVerdict> {
    const path = check.endpoint.path;
    const guards = this.guards.filter((g) => g.options.endpoints?.includes(path) ?? true);
    if (guards.length === 0) return { principal: check.principal, guarded: false };
    const endpoint = this.config.endpoints.find((e) => e.path === path);
    const timeoutMs = endpoint?.auth.guardTimeoutMs ?? 5000;
    return withinTime(this.runEach(guards, check), timeoutMs, {
      status: 503,
      title: 'Handshake check timed out',
      detail: 'The handshake could not be checked in time; try again later.',
      headers: this.retryAfter(),
    });
  }

  private async runEach(guards: readonly Registered[], check: ModuleCheckContext): Promise<GuardVerdict> {
    let principal = check.principal;
    const { request } = check;
    let cookies: Record<string, string | undefined> | null = null;
    for (const guard of guards) {
      const context: HandshakeGuardContext = {
        endpoint: check.endpoint.path,
        params: check.params,
        remoteAddress: request.raw.remoteAddress,
        secure: request.raw.secure,
        clientCertificate: request.raw.clientCertificate ?? null,
        principal,
        header: (name) => request.values(name.toLowerCase()),
        cookie: (name) => (cookies ??= parseCookies(request.values('cookie').join('; ')))[name],
        authenticate: (subject, claims = {}) => {
          principal = { subject, claims, carrier: 'guard' };
        },
      };
      let allowed: boolean;
      try {
        allowed = await guard.handler.canActivate(context);
      } catch (err) {
        return this.refusalOf(err, guard, check);
      }
      if (allowed !== true) {
        return { status: 403, title: 'Forbidden', detail: 'The handshake was refused.' };
      }
    }
    return { principal };
  }

  private refusalOf(err: unknown, guard: Registered, check: ModuleCheckContext): ModuleRefusal {
    const challenge = { 'WWW-Authenticate': `Bearer realm="${check.endpoint.path}"` };
    if (err instanceof HandshakeRefusal || err instanceof HttpException) {
      const status = err instanceof HandshakeRefusal ? err.status : err.getStatus();
      const defaults = status === 401 ? challenge : status === 429 || status === 503 ? this.retryAfter() : {};
      const headers = err instanceof HandshakeRefusal ? { ...defaults, ...err.headers } : defaults;
      return { status, title: titleOf(status), detail: err.message, headers };
    }
    this.logger.error(
      { err: (err as Error)?.message, guard: guard.name, endpoint: check.endpoint.path },
      'handshake guard threw',
    );
    return { status: 500, title: 'Handshake check failed', detail: 'The handshake could not be checked.' };
  }

  private retryAfter(): Record<string, string> {
    return { 'Retry-After': String(this.config.limits.retryAfterSec) };
  }
}

function titleOf(status: number): string {
  if (status === 401) return 'Unauthorized';
  if (status === 403) return 'Forbidden';
  if (status === 429) return 'Too many requests';
  if (status === 503) return 'Service unavailable';
  return 'Refused';
}
