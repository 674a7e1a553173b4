import { Inject, Injectable } from '@nestjs/common';
import { JwtVerifier } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { type CredentialCarrier, type Principal } from '#broker/handshake';
import { BROKER_CONFIG } from './tokens.js';

/** The one verifier used by the handshake, first-message auth and modules' own first messages. */
@Injectable()
export class TokenVerifier {
  private jwt: JwtVerifier | null = null;

  constructor(@Inject(BROKER_CONFIG) private readonly config: BrokerConfig) {}

  /** Called once at boot by GatewayBootstrap: keys are imported before the first handshake. */
  async init(): Promise<void> {
    this.jwt = await JwtVerifier.create(this.config.jwt);
  }

  async verify(token: string, carrier: CredentialCarrier): Promise<Principal> {
    if (this.jwt === null) throw new Error('token verifier used before init');
    const { subject, claims } = await this.jwt.verify(token);
    return { subject, claims, carrier };
  }
}
