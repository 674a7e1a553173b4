import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** What the checkpointer's thread is told (wal-checkpoint-worker.ts). */
export interface CheckpointSettings {
  readonly path: string;
  readonly intervalMs: number;
  /** WAL frames (pages) past which a checkpoint waits for readers and writers (RESTART). */
  readonly maxFrames: number;
  readonly busyTimeoutMs: number;
}

/** Often enough that the WAL stays a few MB under a steady write load; an idle round costs nothing. */
const INTERVAL_MS = 500;
/** 65,536 pages of 4 KiB: 256 MB of WAL, past which a checkpoint holds the next COMMIT (RESTART). */
const MAX_FRAMES = 65_536;
/** The WAL file is cut back to this once written from its start again (SQLite keeps its size). */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

/**
 * SQLite's checkpoints on a thread of their own. With `synchronous = NORMAL`, SQLite checkpoints the
 * WAL itself once it passes 1,000 pages, inside the COMMIT that crossed the line: the copy into the
 * database and two fsyncs then ran on the event loop's thread, for milliseconds at a time, in which
 * no other client was served (BENCHMARKS.md, the worst message). The broker's connection turns those
 * off (`wal_autocheckpoint = 0`) and a worker with a connection of its own checkpoints every half
 * second, as PostgreSQL's checkpointer does in a process of its own. What was committed is durable before any checkpoint (WalSync): a
 * checkpoint only moves it. If the worker fails or dies, the broker's connection checkpoints again as
 * SQLite would, so the WAL never grows unchecked.
 */
export class WalCheckpointer {
  private failure: string | null = null;
  private stopping: Promise<void> | null = null;
  /** Settles when the thread has ended, however it ended: never rejects. */
  private readonly exited: Promise<void>;

  private constructor(
    private readonly worker: Worker,
    sqlite: SqliteDatabase.Database,
  ) {
    this.exited = new Promise((resolve) => {
      worker.on('exit', (code) => {
        if (this.stopping === null) this.fallBack(sqlite, `the checkpoint thread exited (${code})`);
        resolve();
      });
    });
    worker.on('message', (message: { failed: string }) => this.fallBack(sqlite, message.failed));
    worker.on('error', (err) => this.fallBack(sqlite, err.message));
    // Checkpoints never keep the process alive; stop() still waits for the last one.
    worker.unref();
  }

  static start(sqlite: SqliteDatabase.Database, path: string, busyTimeoutMs: number): WalCheckpointer {
    sqlite.pragma('wal_autocheckpoint = 0');
    sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    const settings: CheckpointSettings = {
      path,
      intervalMs: INTERVAL_MS,
      maxFrames: MAX_FRAMES,
      busyTimeoutMs,
    };
    const worker = new Worker(new URL('./wal-checkpoint-worker.js', import.meta.url), {
      workerData: settings,
    });
    return new WalCheckpointer(worker, sqlite);
  }

  /** Why checkpoints went back to the broker's own connection, if they did. */
  get failed(): string | null {
    return this.failure;
  }

  /** A last checkpoint, then the worker's connection closes: before the broker's own closes. */
  stop(): Promise<void> {
    this.stopping ??= this.end();
    return this.stopping;
  }

  private async end(): Promise<void> {
    // Waited for now: an unreferenced worker would let the process end before its last checkpoint.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }

  private fallBack(sqlite: SqliteDatabase.Database, reason: string): void {
    if (this.failure !== null) return;
    this.failure = reason;
    if (sqlite.open) sqlite.pragma('wal_autocheckpoint = 1000');
    // The store has no logger of its own; a process warning reaches stderr, as Node's own do.
    process.emitWarning(`SQLite checkpoints are back on the event loop's thread: ${reason}`, {
      code: 'BROKER_WAL_CHECKPOINT',
    });
  }
}
