import { createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/** Stored API tokens start with this, so the verifier knows not to parse them as JWTs. */
export const TOKEN_PREFIX = 'wsb_';

const SCRYPT = { N: 16384, r: 8, p: 1, keylen: 32 } as const;
const MAX_PASSWORD_BYTES = 1024;

/** A new API token: 256 random bits, base64url, shown once. */
export function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** Tokens are high-entropy, so a keyed fast hash is enough to make a stolen table useless. */
export function hashToken(key: Buffer, token: string): string {
  return createHmac('sha256', key).update(token).digest('hex');
}

function scryptAsync(password: Uint8Array, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, SCRYPT.keylen, { N: n, r, p, maxmem: 64 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url): the parameters travel with the hash so they can be raised later. */
export async function hashPassword(password: Uint8Array): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, SCRYPT.N, SCRYPT.r, SCRYPT.p);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Constant-time comparison of the derived keys; a malformed record or an oversize password is a mismatch. */
export async function verifyPassword(password: Uint8Array, record: string): Promise<boolean> {
  if (password.byteLength > MAX_PASSWORD_BYTES) return false;
  const [scheme, n, r, p, salt, hash] = record.split('$');
  if (scheme !== 'scrypt' || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return key.byteLength === expected.byteLength && timingSafeEqual(key, expected);
}
