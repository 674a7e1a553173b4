import { createHash, timingSafeEqual } from 'node:crypto';
import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  UnauthorizedException,
} from '@nestjs/common';
import { type Request } from 'express';
import { scopesOf } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG, TokenVerifier } from '#broker/gateway';
import { CredentialError } from '#broker/handshake';

export type AdminRequest = Request & { adminActor?: string };

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * Admin tokens from config (compared in constant time), or any broker credential (JWT or stored API
 * token) that carries the `admin` scope. With no admin token configured, only loopback clients that
 * did not come through a proxy are answered, without a credential.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  private readonly tokenDigests: Buffer[];

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    private readonly verifier: TokenVerifier,
  ) {
    this.tokenDigests = config.admin.tokens.map(digest);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<AdminRequest>();
    req.adminActor = this.tokenDigests.length === 0 ? this.loopbackActor(req) : await this.bearerActor(req);
    return true;
  }

  private loopbackActor(req: Request): string {
    const { headers } = req;
    const proxied =
      headers['forwarded'] !== undefined ||
      headers['x-forwarded-for'] !== undefined ||
      headers['x-real-ip'] !== undefined;
    if (!LOOPBACK.has(req.socket.remoteAddress ?? '') || proxied) {
      throw new ForbiddenException(
        'No admin token is configured, so the admin API answers loopback clients only (set ADMIN_TOKEN).',
      );
    }
    // A browser on this machine is a loopback client too. A page of another site must not be trusted:
    // through DNS rebinding its own name resolves to 127.0.0.1 (its Host gives it away), and a form it
    // posts here carries its Origin.
    const origin = headers.origin;
    // Node keeps the first of two Host fields (RFC 9112 makes two a bad request), and a target in
    // absolute form names the host the request is for, whatever Host says (section 3.2.2).
    const hosts = req.rawHeaders.filter((_, i) => i % 2 === 0 && req.rawHeaders[i]?.toLowerCase() === 'host');
    const target = absoluteTargetHost(req.url);
    if (
      hosts.length !== 1 ||
      !isLoopbackHost(headers.host ?? '') ||
      (target !== null && !isLoopbackName(target)) ||
      (origin !== undefined && !isLoopbackOrigin(origin))
    ) {
      throw new ForbiddenException(
        'No admin token is configured, so the admin API answers requests addressed to a loopback name ' +
          '(localhost, 127.0.0.1, [::1]) and not sent by a page of another site (set ADMIN_TOKEN).',
      );
    }
    return 'loopback';
  }

  private async bearerActor(req: Request): Promise<string> {
    const match = /^Bearer +([^\s]+)\s*$/i.exec(req.headers.authorization ?? '');
    const token = match?.[1];
    if (token === undefined) throw new UnauthorizedException('An admin bearer token is required.');
    const presented = digest(token);
    let index = -1;
    // Every configured token is compared, so the time taken does not tell which one nearly matched.
    this.tokenDigests.forEach((d, i) => {
      if (timingSafeEqual(d, presented) && index === -1) index = i;
    });
    if (index !== -1) return `admin-token-${index + 1}`;
    let subject: string;
    try {
      const principal = await this.verifier.verify(token, 'header');
      if (!scopesOf(principal).includes('admin'))
        throw new ForbiddenException('This credential has no admin scope.');
      subject = principal.subject;
    } catch (err) {
      if (err instanceof ForbiddenException) throw err;
      const why =
        err instanceof CredentialError ? err.message : 'it is not an admin token or a valid credential';
      throw new UnauthorizedException(`The bearer token was not accepted: ${why}`);
    }
    return `credential:${subject}`;
  }
}

/** The host a request target in absolute form names (`http://host/...`); null for origin form. */
function absoluteTargetHost(url: string): string | null {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return null;
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}

/** A Host header naming this machine's loopback: localhost, 127.0.0.0/8 or [::1], with any port. */
function isLoopbackHost(host: string): boolean {
  const name = /^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec(host.trim())?.[1];
  return name !== undefined && isLoopbackName(name);
}

/** An Origin on this machine's loopback ('null', an opaque origin, is not). */
function isLoopbackOrigin(origin: string): boolean {
  try {
    return isLoopbackName(new URL(origin).hostname);
  } catch {
    return false;
  }
}

function isLoopbackName(name: string): boolean {
  const lower = name.toLowerCase();
  return lower === 'localhost' || lower === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(lower);
}
