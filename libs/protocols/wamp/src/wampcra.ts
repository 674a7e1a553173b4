import { createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';

/** The salt parameters a client needs to derive its key (salted WAMP-CRA); absent for plain secrets. */
export interface CraSalt {
  readonly salt: string;
  readonly iterations: number;
  readonly keylen: number;
}

/**
 * The HMAC key both sides use: the secret itself, or (salted) the base64 of PBKDF2-HMAC-SHA256 over it,
 * exactly as Autobahn's `derive_key` and wampy's `deriveKey` compute it.
 */
export function craKey(secret: string, salt?: CraSalt): string {
  if (salt === undefined) return secret;
  return pbkdf2Sync(secret, salt.salt, salt.iterations, salt.keylen, 'sha256').toString('base64');
}

export function craChallenge(authid: string, authrole: string, session: number): string {
  return JSON.stringify({
    authid,
    authrole,
    authmethod: 'wampcra',
    authprovider: 'static',
    nonce: randomBytes(16).toString('base64'),
    timestamp: new Date().toISOString(),
    session,
  });
}

export function craSign(key: string, challenge: string): string {
  return createHmac('sha256', key).update(challenge).digest('base64');
}

/** Constant-time comparison of the client's signature with the expected one. */
export function craVerify(key: string, challenge: string, signature: string): boolean {
  const expected = Buffer.from(craSign(key, challenge));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A key no client knows, for challenges to unknown authids: they fail like a wrong secret would. */
export function decoyKey(): string {
  return randomBytes(32).toString('base64');
}

/** Salt parameters for a decoy challenge, shaped like the store's (secrets.ts: 10,000 iterations, 32 bytes). */
export function decoySalt(): CraSalt {
  return { salt: randomBytes(16).toString('base64url'), iterations: 10_000, keylen: 32 };
}
