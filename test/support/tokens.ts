import { SignJWT } from 'jose';
import { JWT_SECRET } from './test-broker.js';

const key = new TextEncoder().encode(JWT_SECRET);

export interface TokenOptions {
  readonly sub?: string;
  /** null: no exp claim at all. */
  readonly expiresIn?: string | number | null;
  readonly notBefore?: string | number;
  readonly secret?: string;
  /** Extra claims, such as `scope`. */
  readonly claims?: Record<string, unknown>;
}

/** A real HS256 JWT signed with the test broker's secret (or another one, to forge a bad signature). */
export function signToken(options: TokenOptions = {}): Promise<string> {
  let jwt = new SignJWT(options.claims ?? {}).setProtectedHeader({ alg: 'HS256' }).setIssuedAt();
  if (options.sub !== '') jwt = jwt.setSubject(options.sub ?? 'alice');
  if (options.expiresIn !== null) jwt = jwt.setExpirationTime(options.expiresIn ?? '5m');
  if (options.notBefore !== undefined) jwt = jwt.setNotBefore(options.notBefore);
  return jwt.sign(options.secret === undefined ? key : new TextEncoder().encode(options.secret));
}
