import { writeSync } from 'node:fs';
import { type DestinationStream } from 'pino';

/** What LineBatch needs of the stream under it: sonic-boom, as pino.destination builds it. */
export interface LineSink {
  write(text: string): unknown;
  flush(cb: (err?: Error | null) => void): void;
  flushSync(): void;
}

/** At exit, how often a full pipe is waited for, and how long each time (about a second in all). */
const EXIT_WRITE_ATTEMPTS = 50;
const EXIT_WRITE_WAIT_MS = 20;

/** The batches whose lines are written out when the process exits: one 'exit' listener for all. */
const open = new Set<LineBatch>();

/**
 * Gathers log lines and hands them to sonic-boom joined, `batchChars` at a time. sonic-boom appends
 * each write to the text it holds and then measures all of that text (Buffer.byteLength flattens it),
 * so with a line per write every handshake's line copied the lines waiting before it: that copy was
 * most of the log line's cost, and a tenth of the handshake's garbage (BENCHMARKS.md's git history). One write per
 * batch copies a batch once. sonic-boom still does the writing (its own batching, EAGAIN).
 *
 * No line is lost to the wait: `flush` (pino's logger.flush, which flushAndExit and the broker's
 * one-second timer call) passes what is held on first, and the process's 'exit' writes it out
 * synchronously, after what sonic-boom holds (see writeAtExit).
 */
export class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly sink: LineSink,
    /** The file descriptor the sink writes to: at exit the held lines are written to it directly. */
    private readonly fd: number,
    private readonly batchChars: number,
  ) {
    if (open.size === 0) {
      // Ahead of every other 'exit' listener, pino's own (which flushes the sink) included.
      process.prependListener('exit', () => {
        for (const batch of open) batch.writeAtExit();
      });
    }
    open.add(this);
  }

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.sink.write(this.take());
  }

  flush(cb: (err?: Error | null) => void = () => undefined): void {
    if (this.lines.length > 0) this.sink.write(this.take());
    this.sink.flush(cb);
  }

  /**
   * The event loop is over: an asynchronous write started now would never finish (and on a
   * non-blocking pipe that is full, it fails unseen). So what sonic-boom holds is written
   * synchronously first, then the held lines, waiting a little for a full pipe. A write sonic-boom
   * already had under way is its own: it finishes, or not, as it would without this class.
   */
  private writeAtExit(): void {
    if (this.lines.length === 0) return;
    const text = Buffer.from(this.take());
    try {
      this.sink.flushSync();
    } catch {
      // A sink that cannot flush now (destroyed, or a write under way) still gets the held lines below.
    }
    let written = 0;
    for (let attempt = 0; written < text.length && attempt < EXIT_WRITE_ATTEMPTS;) {
      try {
        written += writeSync(this.fd, text, written);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return;
        attempt++;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, EXIT_WRITE_WAIT_MS);
      }
    }
  }

  private take(): string {
    const text = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    return text;
  }
}
