import { open, type FileHandle } from 'node:fs/promises';

/** A write committed, but the fsync that makes it durable failed: it may not survive a power cut. */
export class CommitNotDurableError extends Error {
  override readonly name = 'CommitNotDurableError';
}

export type SyncFile = (file: FileHandle) => Promise<void>;

const fsync: SyncFile = (file) => file.sync();

/**
 * Syncs an SQLite database's WAL file on libuv's thread pool. With `synchronous = FULL`, SQLite
 * fsyncs the WAL inside every COMMIT, on the event loop's thread: in the OCPP benchmark the broker's
 * main thread spent 4 % of its time blocked there. With `synchronous = NORMAL` a COMMIT only writes
 * the WAL (SQLite still syncs it before each checkpoint), and the caller that needs the commit on
 * disk waits for sync() instead: an fsync of the WAL that started after the commit is what FULL
 * guarantees. Commits made while an fsync runs share the next one.
 */
export class WalSync {
  private file: Promise<FileHandle> | null = null;
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly walPath: string,
    /** How the file is synced; a test holds it to see who waits. */
    private readonly syncFile: SyncFile = fsync,
  ) {}

  /** Resolves once everything written to the WAL before the call is on disk; CommitNotDurableError if not. */
  sync(): Promise<void> {
    if (this.running === null) return this.start();
    this.queued ??= this.running.then(this.startQueued, this.startQueued);
    return this.queued;
  }

  /** Closes the WAL file; SQLite keeps its own. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = null;
    await Promise.allSettled([this.running, this.queued]);
    if (file !== null) await (await file).close();
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
    try {
      await this.syncFile(await this.openFile());
    } catch (err) {
      throw new CommitNotDurableError(
        `store: the SQLite WAL could not be synced: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  }

  /** Opened at the first sync (SQLite creates the WAL file with the first write), again after a failure. */
  private openFile(): Promise<FileHandle> {
    this.file ??= open(this.walPath, 'r+').catch((err: unknown) => {
      this.file = null;
      throw err;
    });
    return this.file;
  }
}
