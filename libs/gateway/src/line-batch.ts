import { type DestinationStream } from 'pino';

/** What LineBatch needs of the stream under it: sonic-boom, as pino.destination builds it. */
export interface LineSink {
  write(text: string): unknown;
  flush(cb: (err?: Error | null) => void): void;
}

/**
 * Gathers log lines and hands them to sonic-boom joined, `batchChars` at a time. sonic-boom appends
 * each write to the text it holds and then measures all of that text (Buffer.byteLength flattens it),
 * so with a line per write every handshake's line copied the lines waiting before it: that copy was
 * most of the log line's cost, and a tenth of the handshake's garbage (BENCHMARKS.md). One write per
 * batch copies a batch once. sonic-boom still does the writing (its own batching, EAGAIN, exit).
 *
 * No line is lost to the wait: `flush` (pino's logger.flush, which flushAndExit and the broker's
 * one-second timer call) passes what is held on first, and so does the process's 'exit'.
 */
export class LineBatch implements DestinationStream {
  private lines: string[] = [];
  private chars = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly batchChars: number,
  ) {
    // Ahead of every other 'exit' listener: pino's for the sink flushes it, and ends it.
    process.prependListener('exit', () => this.pass());
  }

  write(line: string): void {
    this.lines.push(line);
    this.chars += line.length;
    if (this.chars >= this.batchChars) this.pass();
  }

  flush(cb: (err?: Error | null) => void = () => undefined): void {
    this.pass();
    this.sink.flush(cb);
  }

  private pass(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.join('');
    this.lines = [];
    this.chars = 0;
    this.sink.write(text);
  }
}
