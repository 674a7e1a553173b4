import { CredentialError } from '#broker/handshake';

export interface ClaimRules {
  readonly issuer?: string | undefined;
  readonly audience?: string | undefined;
  readonly clockToleranceSec: number;
  /** The longest a token may still be valid for, from now; 0: no limit but the year 9999. */
  readonly maxLifetimeSec?: number | undefined;
}

/** 9999-12-31T23:59:59Z: a NumericDate past it is no date any system means (`exp` 1e308 was accepted). */
const LAST_DATE_SEC = 253_402_300_799;

/** A token without an expiry would be a credential for ever; jose is told the same (requiredClaims). */
export const REQUIRED_CLAIMS = ['exp'];

/**
 * `exp`, `nbf` and `iat`, where present, are numbers (RFC 7519 NumericDate) no later than the year
 * 9999. JSON's 1e400 parses as Infinity, which is a number to jose too, and 1e308 is finite: an `exp`
 * of either would be a token for ever. With `maxLifetimeSec`, `exp` may be at most that far ahead.
 */
export function checkNumericDates(claims: Record<string, unknown>, rules: ClaimRules, nowSec: number): void {
  for (const claim of ['iat', 'exp', 'nbf'] as const) {
    const value = claims[claim];
    if (value !== undefined && (typeof value !== 'number' || !(Math.abs(value) <= LAST_DATE_SEC))) {
      throw new CredentialError(`the "${claim}" claim is not accepted`);
    }
  }
  const { exp } = claims;
  const max = rules.maxLifetimeSec ?? 0;
  if (max > 0 && typeof exp === 'number' && exp > nowSec + max + rules.clockToleranceSec) {
    throw new CredentialError(`the token is valid for longer than the ${max} s allowed`);
  }
}

/** The registered-claim checks jose applies (RFC 7519 section 4.1), for the synchronous HS256 path. */
export function checkClaims(claims: Record<string, unknown>, rules: ClaimRules, nowSec: number): void {
  const { exp, nbf, iss, aud } = claims;
  if (exp === undefined) throw new CredentialError('the token has no "exp" claim');
  checkNumericDates(claims, rules, nowSec);
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
