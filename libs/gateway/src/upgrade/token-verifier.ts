import { Inject, Injectable, Optional } from '@nestjs/common';
import { JwtVerifier, STORED_TOKENS, type StoredTokenCheck, TokenIntrospection } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { type CredentialCarrier, type Principal } from '#broker/handshake';
import {
  registerIntrospectionMetrics,
  registerJwksMetrics,
} from '../observability/identity-provider-metrics.js';
import { HealthChecks } from '../observability/health-checks.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { BROKER_CONFIG } from './tokens.js';

/** A compact JWS: three base64url parts (a JWT), told from an opaque token by its shape alone. */
const JWS_COMPACT = /^[\w-]+\.[\w-]+\.[\w-]*$/;

/**
 * The one verifier used by the handshake, first-message auth and modules' own first messages:
 * stored API tokens (recognized by their prefix) go to the store; with `introspection` set, an opaque
 * token (anything that is not a compact JWS, or everything when no `jwt` is set) goes to the identity
 * provider's introspection endpoint; everything else is a JWT.
 */
@Injectable()
export class TokenVerifier {
  private jwt: JwtVerifier | null = null;
  private readonly introspection: TokenIntrospection | null;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Optional() @Inject(STORED_TOKENS) private readonly stored: StoredTokenCheck | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
    @Optional() @Inject(HealthChecks) private readonly health: HealthChecks | null = null,
  ) {
    this.introspection =
      config.introspection === undefined ? null : new TokenIntrospection(config.introspection);
  }

  /** Whether any credential can verify at all: a JWT key or the store's tokens. */
  get available(): boolean {
    return this.config.jwt !== undefined || this.introspection !== null || this.stored !== null;
  }

  /** Called once at boot by GatewayBootstrap: keys are imported before the first handshake. */
  async init(): Promise<void> {
    this.jwt = await JwtVerifier.create(this.config.jwt);
    const keys = this.jwt.remoteKeys;
    if (keys !== null && this.metrics !== null) registerJwksMetrics(this.metrics, keys);
    if (keys !== null) {
      // Not a readiness check: every node shares the provider, and stale keys still verify.
      this.health?.addDetail('jwks', () => ({
        keys: keys.keys,
        ageSec: keys.loadedAt === null ? null : Math.round((Date.now() - keys.loadedAt) / 1000),
        lastError: keys.lastError,
      }));
    }
    const introspection = this.introspection;
    if (introspection !== null && this.metrics !== null) {
      registerIntrospectionMetrics(this.metrics, introspection.stats);
    }
    if (introspection !== null) {
      // Not a readiness check either: cached answers still open, and the endpoint is the provider's.
      const { stats } = introspection;
      this.health?.addDetail('introspection', () => ({
        cached: introspection.cached,
        lastAnswerAgeSec:
          stats.answeredAt === null ? null : Math.round((Date.now() - stats.answeredAt) / 1000),
        lastError: stats.lastError,
      }));
    }
  }

  async verify(token: string, carrier: CredentialCarrier): Promise<Principal> {
    if (this.jwt === null) throw new Error('token verifier used before init');
    const { subject, claims } =
      this.stored?.recognizes(token) === true
        ? await this.stored.verify(token)
        : this.introspection !== null && (this.config.jwt === undefined || !JWS_COMPACT.test(token))
          ? await this.introspection.verify(token)
          : await this.jwt.verify(token);
    return { subject, claims, carrier };
  }
}
