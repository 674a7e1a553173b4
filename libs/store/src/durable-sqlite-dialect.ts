import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';
import { type WalSync } from './wal-sync.js';

/** The single SQLite connection, noting whether the statements run since it was acquired wrote anything. */
class TrackedConnection implements DatabaseConnection {
  wrote = false;

  constructor(private readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.inner.executeQuery<R>(compiledQuery);
    // Kysely's SQLite connection counts affected rows for every statement that is not a read.
    if (result.numAffectedRows !== undefined) this.wrote = true;
    return result;
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

/**
 * Kysely's SQLite driver, with a write acknowledged only once it is on disk: a query or transaction
 * that wrote settles after a WalSync that started after its COMMIT. The wait comes after the
 * connection is released, so other queries (reads, the next batch of writes) run meanwhile.
 */
class DurableSqliteDriver implements Driver {
  private connection: TrackedConnection | null = null;

  constructor(
    private readonly inner: Driver,
    private readonly wal: WalSync,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const raw = await this.inner.acquireConnection();
    this.connection ??= new TrackedConnection(raw);
    this.connection.wrote = false;
    return this.connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const wrote = (connection as TrackedConnection).wrote;
    await this.inner.releaseConnection(connection);
    if (wrote) await this.wal.sync();
  }

  async destroy(): Promise<void> {
    await this.wal.close();
    await this.inner.destroy();
  }
}

/** SqliteDialect for a database in WAL mode with `synchronous = NORMAL`, made durable by `wal` (see WalSync). */
export class DurableSqliteDialect extends SqliteDialect {
  constructor(
    config: SqliteDialectConfig,
    private readonly wal: WalSync,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new DurableSqliteDriver(super.createDriver(), this.wal);
  }
}
