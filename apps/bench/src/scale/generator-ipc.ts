import { type Mix } from './scale-options.js';

/** What a generator process is told, as its one argv argument (JSON). */
export interface GeneratorJob {
  readonly port: number;
  /** Global index of its first connection, and how many it opens. */
  readonly start: number;
  readonly count: number;
  readonly addresses: number;
  readonly mix: Mix;
  readonly parallel: number;
  readonly timeoutMs: number;
}

/** From the parent: report the counts now, or close everything, report and exit. */
export interface GeneratorCommand {
  readonly type: 'status' | 'stop';
}

/** From the generator: once all its connections were tried ('opened'), and in answer to a command. */
export interface GeneratorReport {
  readonly type: 'opened' | 'status' | 'stopped';
  /** Connections open right now. */
  readonly open: number;
  /** Milliseconds from the first connect to the last handshake tried. */
  readonly openMs: number;
  readonly errors: [string, number][];
}
