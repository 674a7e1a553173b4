import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, type Migration, type MigrationProvider, Migrator, sql, SqliteDialect } from 'kysely';
import pg from 'pg';
import { type StoreConfig } from '#broker/config';
import { migrationProvider } from './migrations.js';
import { OwnSchemaPostgresDialect } from './own-schema-dialect.js';
import { DurableSqliteDialect } from './durable-sqlite-dialect.js';
import { type Database } from './schema.js';
import { withStatementCache } from './statement-cache.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { WalSync } from './wal-sync.js';

/** How long a statement waits for a lock another connection holds (the checkpoint thread's). */
const BUSY_TIMEOUT_MS = 5000;

export type Backend = 'sqlite' | 'postgres';

export interface OpenDatabase {
  readonly db: Kysely<Database>;
  readonly backend: Backend;
}

/**
 * Opens the configured backend and applies pending migrations. PostgreSQL when a databaseUrl is set
 * (a search_path in its `options` parameter selects a schema), else the SQLite file, created with
 * its folder on first start.
 */
export async function openDatabase(
  config: Pick<StoreConfig, 'sqlitePath' | 'databaseUrl'>,
): Promise<OpenDatabase> {
  const opened =
    config.databaseUrl !== undefined ? openPostgres(config.databaseUrl) : await openSqlite(config.sqlitePath);
  try {
    await migrate(opened);
  } catch (err) {
    await opened.db.destroy();
    throw err;
  }
  return opened;
}

async function openSqlite(path: string): Promise<OpenDatabase> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  try {
    return await configureSqlite(sqlite);
  } catch (err) {
    sqlite.close();
    throw err;
  }
}

async function configureSqlite(sqlite: SqliteDatabase.Database): Promise<OpenDatabase> {
  sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  const database = withStatementCache(sqlite);
  if (sqlite.pragma('journal_mode = WAL', { simple: true }) !== 'wal') {
    // ':memory:' (nothing to lose), or a file system without the shared memory WAL needs: each commit
    // reaches the disk before it returns.
    sqlite.pragma('synchronous = FULL');
    return { db: new Kysely<Database>({ dialect: new SqliteDialect({ database }) }), backend: 'sqlite' };
  }
  // Nothing is acknowledged before it is on disk, and a COMMIT does not wait for the disk: it writes the
  // WAL, and the caller's promise settles after an fsync of it on the thread pool (WalSync).
  sqlite.pragma('synchronous = NORMAL');
  // The WAL is next to the file SQLite opened, links resolved; a read creates it.
  const files = sqlite.pragma('database_list') as { name: string; file: string }[];
  const main = files.find((d) => d.name === 'main');
  if (main === undefined) throw new Error('store: SQLite lists no main database');
  sqlite.prepare('select count(*) from sqlite_master').get();
  const wal = await WalSync.open(`${main.file}-wal`);
  const checkpointer = WalCheckpointer.start(sqlite, main.file, BUSY_TIMEOUT_MS);
  return {
    db: new Kysely<Database>({ dialect: new DurableSqliteDialect(database, wal, checkpointer) }),
    backend: 'sqlite',
  };
}

function openPostgres(url: string): OpenDatabase {
  const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5000 });
  return {
    db: new Kysely<Database>({ dialect: new OwnSchemaPostgresDialect({ pool }) }),
    backend: 'postgres',
  };
}

/**
 * On PostgreSQL the migration tables are named with the connection's own schema: left unnamed, Kysely
 * looks for them in every schema of the database, and a neighbour's (another broker's, a test's) would
 * make it skip creating ours and then fail on the missing table.
 */
async function migrate(opened: OpenDatabase): Promise<void> {
  await runMigrations(opened, migrationProvider, {});
}

/** A module's own migrations: recorded in `<owner>_migration` (and locked by `<owner>_migration_lock`). */
export async function migrateModule(
  opened: OpenDatabase,
  owner: string,
  migrations: Readonly<Record<string, Migration>>,
): Promise<void> {
  if (!/^[a-z][a-z0-9_]{0,39}$/.test(owner)) {
    throw new Error(
      `store: a module's migrations need a name of a-z, 0-9 and _ (got ${JSON.stringify(owner)})`,
    );
  }
  await runMigrations(
    opened,
    { getMigrations: () => Promise.resolve({ ...migrations }) },
    { migrationTableName: `${owner}_migration`, migrationLockTableName: `${owner}_migration_lock` },
  );
}

async function runMigrations(
  { db, backend }: OpenDatabase,
  provider: MigrationProvider,
  tables: { migrationTableName?: string; migrationLockTableName?: string },
): Promise<void> {
  const migrationTableSchema =
    backend === 'postgres'
      ? ((await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db)).rows[0]
          ?.schema ?? undefined)
      : undefined;
  const migrator = new Migrator({
    db,
    provider,
    ...tables,
    ...(migrationTableSchema !== undefined && { migrationTableSchema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`store: migration ${failed} failed: ${(error as Error).message}`, { cause: error });
  }
}

/** A unique or primary-key constraint refused the write (SQLite and PostgreSQL spell it differently). */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
