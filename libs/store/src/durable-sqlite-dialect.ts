import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  SqliteDialect,
  type TransactionSettings,
} from 'kysely';
import { type PreparingDatabase } from './statement-cache.js';
import { type WalCheckpointer } from './wal-checkpointer.js';
import { type WalSync } from './wal-sync.js';

/** Whether a statement that changes the database ran since the connection was last acquired. */
interface Writes {
  wrote: boolean;
  /** `wrote` when the open transaction began: a rollback returns to it. */
  beforeTransaction: boolean;
}

/**
 * Kysely's SQLite driver, with a write acknowledged only once it is on disk: a query or transaction
 * that wrote settles after a WalSync that started after its COMMIT. The wait comes after the
 * connection is released, so other queries (reads, the next batch of writes) run meanwhile.
 */
class DurableSqliteDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly wal: WalSync,
    private readonly writes: Writes,
    private readonly checkpointer: WalCheckpointer | null,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    this.writes.wrote = false;
    return connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    this.writes.beforeTransaction = this.writes.wrote;
    return this.inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }

  /** Nothing of a rolled-back transaction is on its way to the disk: its caller's error stays its own. */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.inner.rollbackTransaction(connection);
    this.writes.wrote = this.writes.beforeTransaction;
  }

  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.savepoint?.(connection, name, compileQuery);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.rollbackToSavepoint?.(connection, name, compileQuery);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.inner.releaseSavepoint?.(connection, name, compileQuery);
  }

  /** The sync is asked for before the connection is free, so a close that takes it next waits for it. */
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const durable = this.writes.wrote ? this.wal.sync() : null;
    await this.inner.releaseConnection(connection);
    await durable;
  }

  /**
   * Takes the connection first: a query or transaction under way ends and its sync runs before the
   * WAL file and the database close, and the checkpoint thread's connection closes before ours.
   */
  async destroy(): Promise<void> {
    const connection = await this.inner.acquireConnection();
    try {
      await this.checkpointer?.stop();
      await this.wal.close();
    } finally {
      await this.inner.destroy();
      await this.inner.releaseConnection(connection);
    }
  }
}

/**
 * SqliteDialect for a database in WAL mode with `synchronous = NORMAL`, made durable by `wal` (see
 * WalSync). A statement counts as a write unless SQLite calls it read-only (`sqlite3_stmt_readonly`:
 * an INSERT ... RETURNING writes, BEGIN and COMMIT do not). SQLite calls read-only some statements
 * that write indirectly (`PRAGMA optimize`, a user-defined function's SQL); the store runs none. What is durable when it settles: a query
 * and `transaction().execute()`. Not the steps of `startTransaction()` or `connection()`, whose
 * connection is released after they settle; the store uses neither.
 */
export class DurableSqliteDialect extends SqliteDialect {
  private readonly writes: Writes;

  constructor(
    database: PreparingDatabase,
    private readonly wal: WalSync,
    /** Checkpoints off the event loop (WalCheckpointer), stopped when the database closes. */
    private readonly checkpointer: WalCheckpointer | null = null,
  ) {
    const writes: Writes = { wrote: false, beforeTransaction: false };
    super({
      database: {
        close: () => database.close(),
        prepare(sql: string) {
          const statement = database.prepare(sql);
          if (!statement.readonly) {
            // Once an fsync has failed, nothing more is committed: it could not be acknowledged.
            wal.assertDurable();
            writes.wrote = true;
          }
          return statement;
        },
      },
    });
    this.writes = writes;
  }

  override createDriver(): Driver {
    return new DurableSqliteDriver(super.createDriver(), this.wal, this.writes, this.checkpointer);
  }
}
