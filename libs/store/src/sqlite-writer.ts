import { Worker } from 'node:worker_threads';
import { type WriterReply, type WriteStatement } from './sqlite-writer.types.js';

/** How long a write may take (SQLite's own busy timeout is 5 s) before its caller is told it failed. */
const WRITE_TIMEOUT_MS = 30_000;

interface Waiting {
  readonly resolve: () => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Runs writes to the broker's SQLite file on a thread of their own. better-sqlite3 is synchronous:
 * on the main thread every commit held the event loop for the insert and for the fsync that makes it
 * durable (synchronous = FULL), about a tenth of the main thread under OCPP meter-value load
 * (BENCHMARKS.md), while every connection waited. Here the main thread only posts the statements and
 * is told when they have committed; the writer has its own connection to the file, whose WAL journal
 * lets the main thread's connection read meanwhile. A writer thread that dies fails the writes it had
 * and is started again by the next one.
 */
export class SqliteWriter {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  private closed = false;

  constructor(private readonly file: string) {}

  /** Runs the statements in one transaction; resolves once it has committed. */
  transaction(statements: readonly WriteStatement[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the SQLite writer is closed'));
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the SQLite writer did not answer within ${WRITE_TIMEOUT_MS / 1000} s`));
      }, WRITE_TIMEOUT_MS);
      this.waiting.set(id, { resolve, reject, timer });
      worker.postMessage({ id, statements });
    });
  }

  /** Stops the thread; call once no write is waiting (after the callers' own flush). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.closed = true;
    this.failAll(new Error('the SQLite writer is closed'));
    if (worker !== null) await worker.terminate();
  }

  private start(): Worker {
    const worker = new Worker(new URL('./sqlite-writer.worker.js', import.meta.url), {
      workerData: { file: this.file },
    });
    worker.on('message', (reply: WriterReply) => this.answered(reply));
    worker.on('error', (err) => this.stopped(worker, err));
    worker.on('exit', (code) => this.stopped(worker, new Error(`exited with code ${code}`)));
    // An idle writer thread does not keep the process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answered(reply: WriterReply): void {
    const waiting = this.waiting.get(reply.id);
    if (waiting === undefined) return;
    this.waiting.delete(reply.id);
    clearTimeout(waiting.timer);
    if (reply.error === null) waiting.resolve();
    else waiting.reject(new Error(reply.error));
  }

  private stopped(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.failAll(new Error(`the SQLite writer thread stopped: ${err.message}`));
  }

  private failAll(err: Error): void {
    for (const waiting of this.waiting.values()) {
      clearTimeout(waiting.timer);
      waiting.reject(err);
    }
    this.waiting.clear();
  }
}
