import { pbkdf2, randomBytes } from 'node:crypto';
import { type Principal } from '#broker/handshake';
import { type BrokerStore, type CredentialView, type NewToken } from '#broker/store';
import { WAMP_MIGRATIONS } from './wamp.migrations.js';

/** The kind of the broker's credentials these are. */
const KIND = 'wampcra';

const CRA = { iterations: 10_000, keylen: 32 } as const;

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

export interface NewCraCredential extends NewToken {
  /** The authid the client sends in HELLO. */
  readonly authid: string;
  readonly secret: string;
}

/**
 * WAMP-CRA credentials in the broker's credentials table (listed, audited and revoked with the others):
 * created through this module's admin route, looked up by authid when a client answers a CHALLENGE.
 */
export class CraCredentials {
  /** Over `store`, once the module's own index is there. */
  static async open(store: BrokerStore): Promise<CraCredentials> {
    await store.migrate('wamp', WAMP_MIGRATIONS);
    return new CraCredentials(store);
  }

  private constructor(private readonly store: BrokerStore) {}

  /** Only the PBKDF2-derived key is kept; the client derives it from its secret with the salt it is sent. */
  async create(input: NewCraCredential, actor: string): Promise<CredentialView> {
    const record = await hashCraSecret(input.secret);
    return this.store.credentials.createOfKind(KIND, input, input.authid, record, actor);
  }

  /** The active (not revoked, not expired) credential for this authid, or null. */
  async craKey(authid: string): Promise<StoredCraKey | null> {
    const found = await this.store.credentials.activeOfKind(KIND, authid);
    if (found === null) return null;
    const record = parseCraRecord(found.secretHash);
    return record === null ? null : { ...record, principal: found.principal };
  }
}

/**
 * Salted WAMP-CRA: `pbkdf2-sha256$iterations$keylen$salt$key`. The key is what Autobahn's `derive_key`
 * and wampy's `deriveKey` compute from the secret; the secret itself is not kept.
 */
function hashCraSecret(secret: string): Promise<string> {
  const salt = randomBytes(16).toString('base64url');
  return new Promise((resolve, reject) => {
    pbkdf2(secret, salt, CRA.iterations, CRA.keylen, 'sha256', (err, key) =>
      err
        ? reject(err)
        : resolve(['pbkdf2-sha256', CRA.iterations, CRA.keylen, salt, key.toString('base64')].join('$')),
    );
  });
}

function parseCraRecord(record: string): Omit<StoredCraKey, 'principal'> | null {
  const [scheme, iterations, keylen, salt, key] = record.split('$');
  if (scheme !== 'pbkdf2-sha256' || salt === undefined || key === undefined) return null;
  return { key, salt, iterations: Number(iterations), keylen: Number(keylen) };
}
