import { CredentialError } from '#broker/handshake';

export interface ClaimRules {
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly clockToleranceSec: number;
}

/** A token without an expiry would be a credential for ever; jose is told the same (requiredClaims). */
export const REQUIRED_CLAIMS = ['exp'];

/**
 * `exp`, `nbf` and `iat`, where present, are finite numbers (RFC 7519 NumericDate). JSON's 1e400
 * parses as Infinity, which is a number to jose too: an `exp` of it would be a token for ever.
 */
export function checkNumericDates(claims: Record<string, unknown>): void {
  for (const claim of ['iat', 'exp', 'nbf'] as const) {
    const value = claims[claim];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      throw new CredentialError(`the "${claim}" claim is not accepted`);
    }
  }
}

/** The registered-claim checks jose applies (RFC 7519 section 4.1), for the synchronous HS256 path. */
export function checkClaims(claims: Record<string, unknown>, rules: ClaimRules, nowSec: number): void {
  const { exp, nbf, iss, aud } = claims;
  if (exp === undefined) throw new CredentialError('the token has no "exp" claim');
  checkNumericDates(claims);
  if (typeof exp === 'number' && exp <= nowSec - rules.clockToleranceSec) {
    throw new CredentialError('the token has expired');
  }
  if (typeof nbf === 'number' && nbf > nowSec + rules.clockToleranceSec) {
    throw new CredentialError('the token is not yet valid');
  }
  if (rules.issuer !== undefined && iss !== rules.issuer)
    throw new CredentialError('the "iss" claim is not accepted');
  if (rules.audience !== undefined) {
    const audiences = Array.isArray(aud) ? aud : [aud];
    if (!audiences.includes(rules.audience)) throw new CredentialError('the "aud" claim is not accepted');
  }
}
