import { CredentialError } from '#broker/handshake';

export interface ClaimRules {
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly clockToleranceSec: number;
}

/** A token without an expiry would be a credential for ever; jose is told the same (requiredClaims). */
export const REQUIRED_CLAIMS = ['exp'];

/** The registered-claim checks jose applies (RFC 7519 section 4.1), for the synchronous HS256 path. */
export function checkClaims(claims: Record<string, unknown>, rules: ClaimRules, nowSec: number): void {
  const { exp, nbf, iat, iss, aud } = claims;
  if (exp === undefined) throw new CredentialError('the token has no "exp" claim');
  if (iat !== undefined && typeof iat !== 'number')
    throw new CredentialError('the "iat" claim is not accepted');
  if (exp !== undefined && typeof exp !== 'number')
    throw new CredentialError('the "exp" claim is not accepted');
  if (nbf !== undefined && typeof nbf !== 'number')
    throw new CredentialError('the "nbf" claim is not accepted');
  if (exp !== undefined && exp <= nowSec - rules.clockToleranceSec) {
    throw new CredentialError('the token has expired');
  }
  if (nbf !== undefined && nbf > nowSec + rules.clockToleranceSec) {
    throw new CredentialError('the token is not yet valid');
  }
  if (rules.issuer !== undefined && iss !== rules.issuer)
    throw new CredentialError('the "iss" claim is not accepted');
  if (rules.audience !== undefined) {
    const audiences = Array.isArray(aud) ? aud : [aud];
    if (!audiences.includes(rules.audience)) throw new CredentialError('the "aud" claim is not accepted');
  }
}
