import { type Principal } from '#broker/handshake';

/**
 * A stored WAMP-CRA credential (salted variant): WAMP-CRA needs the server to hold the HMAC key, so the
 * store keeps the PBKDF2-derived key, never the secret itself.
 */
export interface StoredCraKey {
  /** base64 PBKDF2-HMAC-SHA256(secret, salt, iterations, keylen): the key both sides sign with. */
  readonly key: string;
  readonly salt: string;
  readonly iterations: number;
  readonly keylen: number;
  readonly principal: Principal;
}

export interface CraKeyLookup {
  /** The active (not revoked, not expired) credential for this authid, or null. */
  craKey(authid: string): Promise<StoredCraKey | null>;
}

export const CRA_KEYS = Symbol('CRA_KEYS');
