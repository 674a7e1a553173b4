import { type Kysely, type Selectable } from 'kysely';
import { type VerifiedToken } from '#broker/auth';
import { CredentialError, type Principal } from '#broker/handshake';
import { writeAudit } from './audit.repository.js';
import { isUniqueViolation } from './database.js';
import { ConflictError, NotFoundError } from './errors.js';
import { newId, timestamp } from './ids.js';
import { type CredentialsTable, type Database } from './schema.js';
import { hashPassword, hashToken, newToken, TOKEN_PREFIX, verifyPassword } from './secrets.js';
import { type Actor, type CredentialView } from './store.types.js';

export interface NewToken {
  readonly name: string;
  readonly scopes: readonly string[];
  readonly expiresAt: string | null;
}

export interface NewPassword extends NewToken {
  readonly username: string;
  readonly password: string;
}

type Row = Selectable<CredentialsTable>;

function statusOf(row: Row, now: string): CredentialView['status'] {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now) return 'expired';
  return 'active';
}

function view(row: Row, now = timestamp()): CredentialView {
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    username: row.username,
    scopes: JSON.parse(row.scopes) as string[],
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    status: statusOf(row, now),
  };
}

// A fixed record to hash against when the username is unknown, so timing does not tell which users exist.
const DUMMY_RECORD = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** The kinds this repository checks itself; a module's own kind must be named otherwise. */
const OWN_KINDS: ReadonlySet<string> = new Set(['token', 'password']);

/**
 * API tokens, username/password credentials, and the kinds modules add (`createOfKind`). Secrets are
 * hashed and never read back.
 */
export class CredentialsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly tokenKey: Buffer,
  ) {}

  async list(): Promise<CredentialView[]> {
    const now = timestamp();
    return (await this.db.selectFrom('credentials').selectAll().orderBy('id').execute()).map((r) =>
      view(r, now),
    );
  }

  async get(id: string): Promise<CredentialView> {
    const row = await this.db.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
    if (row === undefined) throw new NotFoundError(`no credential ${id}`);
    return view(row);
  }

  /** The token is returned once, here; only its keyed hash is kept. */
  async createToken(input: NewToken, actor: Actor): Promise<{ credential: CredentialView; token: string }> {
    const token = newToken();
    const row = this.row('token', input, null, hashToken(this.tokenKey, token));
    await this.insert(row, actor);
    return { credential: view(row), token };
  }

  async createPassword(input: NewPassword, actor: Actor): Promise<CredentialView> {
    const row = this.row('password', input, input.username, await hashPassword(Buffer.from(input.password)));
    await this.insert(row, actor);
    return view(row);
  }

  /**
   * A credential of a module's own kind for `username` (unique among the kind's active ones, if the
   * module's migration says so), whose secret the module hashed its own way (it alone checks it):
   * listed, audited and revoked with the others.
   */
  async createOfKind(
    kind: string,
    input: NewToken,
    username: string,
    secretHash: string,
    actor: Actor,
  ): Promise<CredentialView> {
    if (OWN_KINDS.has(kind)) throw new Error(`credentials of kind ${kind} are made by their own method`);
    const row = this.row(kind, input, username, secretHash);
    await this.insert(row, actor);
    return view(row);
  }

  async revoke(id: string, actor: Actor): Promise<CredentialView> {
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('credentials').selectAll().where('id', '=', id).executeTakeFirst();
      if (row === undefined) return null;
      if (row.revoked_at !== null) return view(row);
      const revoked = { ...row, revoked_at: timestamp() };
      await trx
        .updateTable('credentials')
        .set({ revoked_at: revoked.revoked_at })
        .where('id', '=', id)
        .execute();
      await writeAudit(trx, {
        actor,
        action: 'credential.revoke',
        target: id,
        before: view(row),
        after: view(revoked),
      });
      return view(revoked);
    });
    if (result === null) throw new NotFoundError(`no credential ${id}`);
    return result;
  }

  recognizes(token: string): boolean {
    return token.startsWith(TOKEN_PREFIX);
  }

  async verifyToken(token: string): Promise<VerifiedToken> {
    const row = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where('kind', '=', 'token')
      .where('secret_hash', '=', hashToken(this.tokenKey, token))
      .executeTakeFirst();
    if (row === undefined) throw new CredentialError('The token is not known.');
    return this.usable(row);
  }

  /** null for an unknown username, a wrong password, or a revoked or expired credential. */
  async verifyPassword(username: string, password: Uint8Array): Promise<Principal | null> {
    const row = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where('kind', '=', 'password')
      .where('username', '=', username)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    const matches = await verifyPassword(password, row?.secret_hash ?? DUMMY_RECORD);
    if (row === undefined || !matches || statusOf(row, timestamp()) !== 'active') return null;
    return { ...this.principalOf(row), carrier: 'first-message' };
  }

  /** The active (not revoked, not expired) credential of a module's kind for `username`, or null. */
  async activeOfKind(
    kind: string,
    username: string,
  ): Promise<{ readonly secretHash: string; readonly principal: Principal } | null> {
    const row = await this.db
      .selectFrom('credentials')
      .selectAll()
      .where('kind', '=', kind)
      .where('username', '=', username)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (row === undefined || statusOf(row, timestamp()) !== 'active') return null;
    return { secretHash: row.secret_hash, principal: { ...this.principalOf(row), carrier: 'first-message' } };
  }

  private usable(row: Row): VerifiedToken {
    const status = statusOf(row, timestamp());
    if (status === 'revoked') throw new CredentialError('The token was revoked.');
    if (status === 'expired') throw new CredentialError('The token has expired.');
    return this.principalOf(row);
  }

  private principalOf(row: Row): VerifiedToken {
    const scopes = JSON.parse(row.scopes) as string[];
    return {
      subject: row.username ?? row.name,
      claims: {
        credential: row.id,
        scopes,
        // As a JWT would say it, so the gateway closes connections whose credential expires.
        ...(row.expires_at === null ? {} : { exp: Math.floor(Date.parse(row.expires_at) / 1000) }),
      },
    };
  }

  private row(kind: Row['kind'], input: NewToken, username: string | null, secretHash: string): Row {
    return {
      id: newId(),
      kind,
      name: input.name,
      username,
      secret_hash: secretHash,
      scopes: JSON.stringify(input.scopes),
      created_at: timestamp(),
      expires_at: input.expiresAt,
      revoked_at: null,
    };
  }

  private async insert(row: Row, actor: Actor): Promise<void> {
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('credentials').values(row).execute();
        await writeAudit(trx, {
          actor,
          action: `credential.create`,
          target: row.id,
          before: null,
          after: view(row),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err))
        throw new ConflictError(`an active ${row.kind} credential for ${String(row.username)} exists`);
      throw err;
    }
  }
}
