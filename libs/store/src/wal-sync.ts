import { open, type FileHandle } from 'node:fs/promises';
import { CommitNotDurableError } from './errors.js';

export type SyncFile = (file: FileHandle) => Promise<void>;

const fsync: SyncFile = (file) => file.sync();

/**
 * Syncs an SQLite database's WAL file on libuv's thread pool. With `synchronous = FULL`, SQLite
 * fsyncs the WAL inside every COMMIT, on the event loop's thread, which then waits for the disk.
 * With `synchronous = NORMAL` a COMMIT only writes the WAL (SQLite still syncs it around each checkpoint), and the caller that needs the commit on
 * disk waits for sync() instead: an fsync of the WAL that started after the commit is what FULL
 * guarantees. Commits made while an fsync runs share the next one.
 *
 * A failed fsync is final. SQLite has committed what it carried, and Linux reports a writeback
 * error once and then counts the lost pages as clean, so a later fsync would succeed without them,
 * and every commit after them would be acknowledged and still lost to a power cut (PostgreSQL stops
 * for the same reason). From then on every sync() fails.
 */
export class WalSync {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private failure: CommitNotDurableError | null = null;
  private closed = false;

  private constructor(
    private readonly file: FileHandle,
    private readonly syncFile: SyncFile,
  ) {}

  /** Opens the WAL file, which must exist (SQLite creates it at the first read in WAL mode). */
  static async open(walPath: string, syncFile: SyncFile = fsync): Promise<WalSync> {
    try {
      return new WalSync(await open(walPath, 'r+'), syncFile);
    } catch (err) {
      throw new Error(`store: cannot open the SQLite WAL to sync it: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /** Throws the failure of an earlier fsync, if one failed: no write should be committed after it. */
  assertDurable(): void {
    if (this.failure !== null) throw this.failure;
  }

  /** Resolves once everything written to the WAL before the call is on disk; CommitNotDurableError if not. */
  sync(): Promise<void> {
    if (this.closed) return Promise.reject(new CommitNotDurableError('store: the WAL file is closed'));
    if (this.running === null) return this.start();
    this.queued ??= this.running.then(this.startQueued, this.startQueued);
    return this.queued;
  }

  /** Waits for the syncs under way, and for those asked for meanwhile, then closes the WAL file. */
  async close(): Promise<void> {
    while (this.running !== null || this.queued !== null) {
      await Promise.allSettled([this.running, this.queued]);
    }
    this.closed = true;
    await this.file.close();
  }

  private readonly startQueued = (): Promise<void> => {
    this.queued = null;
    return this.start();
  };

  private start(): Promise<void> {
    const run = this.syncOnce().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  private async syncOnce(): Promise<void> {
    if (this.failure !== null) throw this.failure;
    try {
      await this.syncFile(this.file);
    } catch (err) {
      this.failure = new CommitNotDurableError(
        `store: the SQLite WAL could not be synced to disk (${(err as Error).message}). What was ` +
          'committed since the last sync may not survive a power cut, and no write is acknowledged ' +
          'any more: restart the broker once the disk is sound.',
        { cause: err },
      );
      throw this.failure;
    }
  }
}
