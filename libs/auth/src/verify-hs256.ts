import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import { CredentialError } from '#broker/handshake';
import { decodeSegment } from './compact-jws.js';

/**
 * Written by hand, on purpose: jose 6 verifies through WebCrypto only, so every HS256 check is an
 * async job on the libuv threadpool, which measured ~70 µs of each handshake. A synchronous
 * node:crypto HMAC costs a few µs. Only the signature is checked here (compact form, alg HS256,
 * constant-time compare); claims are checked by `checkClaims` for both paths.
 */
export function verifyHs256(token: string, key: KeyObject): Record<string, unknown> {
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first <= 0 || second <= first + 1 || token.indexOf('.', second + 1) !== -1) {
    throw new CredentialError('the token is malformed');
  }
  const header = decodeJson(token.slice(0, first));
  if (header['alg'] !== 'HS256') throw new CredentialError('the signing algorithm is not allowed');
  if (header['crit'] !== undefined) throw new CredentialError('the token is malformed');
  const signature = decodeSegment(token.slice(second + 1));
  const expected = createHmac('sha256', key).update(token.slice(0, second)).digest();
  if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) {
    throw new CredentialError('the signature is invalid');
  }
  return decodeJson(token.slice(first + 1, second));
}

// Invalid UTF-8 is refused, as jose refuses it, instead of being read as U+FFFD.
const UTF8 = new TextDecoder('utf-8', { fatal: true });

function decodeJson(segment: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(decodeSegment(segment)));
  } catch {
    throw new CredentialError('the token is malformed');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CredentialError('the token is malformed');
  }
  return value as Record<string, unknown>;
}
