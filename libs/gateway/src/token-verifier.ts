import { Inject, Injectable, Optional } from '@nestjs/common';
import { JwtVerifier, STORED_TOKENS, type StoredTokenCheck } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { type CredentialCarrier, type Principal } from '#broker/handshake';
import { registerJwksMetrics } from './jwks-metrics.js';
import { GatewayMetrics } from './metrics.js';
import { BROKER_CONFIG } from './tokens.js';

/**
 * The one verifier used by the handshake, first-message auth and modules' own first messages:
 * stored API tokens (recognized by their prefix) go to the store, everything else is a JWT.
 */
@Injectable()
export class TokenVerifier {
  private jwt: JwtVerifier | null = null;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Optional() @Inject(STORED_TOKENS) private readonly stored: StoredTokenCheck | null = null,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  /** Whether any credential can verify at all: a JWT key or the store's tokens. */
  get available(): boolean {
    return this.config.jwt !== undefined || this.stored !== null;
  }

  /** Called once at boot by GatewayBootstrap: keys are imported before the first handshake. */
  async init(): Promise<void> {
    this.jwt = await JwtVerifier.create(this.config.jwt);
    const keys = this.jwt.remoteKeys;
    if (keys !== null && this.metrics !== null) registerJwksMetrics(this.metrics, keys);
  }

  async verify(token: string, carrier: CredentialCarrier): Promise<Principal> {
    if (this.jwt === null) throw new Error('token verifier used before init');
    const { subject, claims } =
      this.stored?.recognizes(token) === true
        ? await this.stored.verify(token)
        : await this.jwt.verify(token);
    return { subject, claims, carrier };
  }
}
