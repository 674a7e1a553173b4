import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Migration } from 'kysely';
import { type StoreConfig } from '#broker/config';
import { AuditRepository } from './audit.repository.js';
import { CredentialsRepository } from './credentials.repository.js';
import { migrateModule, openDatabase, type Backend } from './database.js';
import { OriginsRepository } from './origins.repository.js';
import { type Database } from './schema.js';

/**
 * The one store the gateway, the admin API and the protocol modules use: a repository per kind of
 * shared state over one Kysely instance, whichever backend it runs on. A protocol keeps its own
 * tables (`migrate`) and repositories over `db` (OCPP's live in its lib) and gives close() what it
 * still has to write.
 */
export class BrokerStore {
  readonly origins: OriginsRepository;
  readonly credentials: CredentialsRepository;
  readonly audit: AuditRepository;
  private readonly pendingWrites: (() => Promise<void>)[] = [];

  private constructor(
    readonly db: Kysely<Database>,
    readonly backend: Backend,
    tokenKey: Buffer,
  ) {
    this.origins = new OriginsRepository(db);
    this.credentials = new CredentialsRepository(db, tokenKey);
    this.audit = new AuditRepository(db);
  }

  static async open(config: Pick<StoreConfig, 'sqlitePath' | 'databaseUrl'>): Promise<BrokerStore> {
    const { db, backend } = await openDatabase(config);
    try {
      return new BrokerStore(db, backend, await tokenHashKey(db));
    } catch (err) {
      await db.destroy();
      throw err;
    }
  }

  /** Resolves when the database answers a query (the readiness check). */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  /**
   * Applies a module's own migrations, in name order, once each: they are recorded under `owner` (a-z,
   * 0-9, _), apart from the broker's and every other module's, so a module brings its tables with it.
   * Safe on several nodes at once (the migrator's lock). Never edit one that has shipped: add the next.
   */
  async migrate(owner: string, migrations: Readonly<Record<string, Migration>>): Promise<void> {
    await migrateModule({ db: this.db, backend: this.backend }, owner, migrations);
  }

  /**
   * `write` finishes what is still on its way to the database (rows being group-committed, values
   * written behind) and takes no more; close() runs it before the database closes.
   */
  beforeClose(write: () => Promise<void>): void {
    this.pendingWrites.push(write);
  }

  /** Runs every beforeClose write to its end even if another fails, and rejects with the first failure. */
  async close(): Promise<void> {
    try {
      const results = await Promise.allSettled(this.pendingWrites.map((write) => write()));
      for (const result of results) if (result.status === 'rejected') throw result.reason;
    } finally {
      await this.db.destroy();
    }
  }
}

/** The HMAC key for API tokens: made on first start and kept in the database, shared by every node. */
async function tokenHashKey(db: Kysely<Database>): Promise<Buffer> {
  const key = 'token-hash-key';
  await db
    .insertInto('settings')
    .values({ key, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64url');
}
