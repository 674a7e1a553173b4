import { type Logger } from 'pino';
import { chindingsOf, streamOf } from './pino-internals.js';
import { writesPlainLines } from './logger.js';

/** The fields of the one line logged per handshake decision. */
export interface DecisionFields {
  readonly status: number;
  readonly endpoint: string | null;
  readonly subprotocol: string | null;
  readonly reason: string;
  /** The request target, already redacted. */
  readonly path: string;
  /** The offered subprotocols, already redacted; left out when none were offered. */
  readonly offered: string | undefined;
  readonly client: string;
  readonly durationMs: number;
}

/** What a log line keeps of a client's own text (its path, its offered subprotocols). */
const MAX_LOGGED_CHARS = 256;

/**
 * A client's text, cut for a log line: a head may be as large as http.maxHeaderSize, and a line
 * that large per attempt would let one client fill the log.
 */
export function clip(text: string): string;
export function clip(text: string | undefined): string | undefined;
export function clip(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= MAX_LOGGED_CHARS
    ? text
    : `${text.slice(0, MAX_LOGGED_CHARS)}…(${text.length - MAX_LOGGED_CHARS} more)`;
}

/** How many distinct endpoint, module and reason strings DecisionLog keeps quoted. */
const MAX_QUOTED = 256;

/**
 * Writes the handshake line onto a pino logger's own stream, in pino's format (level, time, the
 * logger's bindings, the fields, msg), built by hand: pino's generic path (an object walk, a
 * stringify per value, formatters) was about a twentieth of a handshake's cost in the benchmark,
 * and this line is written for every handshake. Every field is a number, null or a string that was
 * redacted before it got here, so no redaction pass is needed. The stream and bindings come through
 * pino.symbols (pino-internals.ts). Only for loggers of createLogger, whose format is pino's
 * default: any other logger (its own message key, level labels, timestamps, mixins, a multistream
 * that routes by what pino tells it) gets the line through pino.
 */
export class DecisionLog {
  private readonly level: number | undefined;
  /**
   * Endpoint paths, module names and reasons, JSON-quoted: a few strings of the configuration and the
   * code, seen on every line. Bounded, since a third-party module's check may word its own reasons.
   */
  private readonly quoted = new Map<string, string>();

  constructor(private readonly logger: Logger) {
    this.level = writesPlainLines(logger) ? logger.levels.values['info'] : undefined;
  }

  write(fields: DecisionFields): void {
    if (!this.logger.isLevelEnabled('info')) return;
    if (this.level === undefined) return this.logger.info(fields, 'handshake');
    const q = JSON.stringify;
    const offered = fields.offered === undefined ? '' : `,"offered":${q(fields.offered)}`;
    streamOf(this.logger).write(
      `{"level":${this.level},"time":${Date.now()}${chindingsOf(this.logger)}` +
        `,"status":${fields.status},"endpoint":${this.quote(fields.endpoint)}` +
        `,"subprotocol":${this.quote(fields.subprotocol)},"reason":${this.quote(fields.reason)}` +
        `,"path":${q(fields.path)}${offered},"client":${q(fields.client)}` +
        `,"durationMs":${fields.durationMs},"msg":"handshake"}\n`,
    );
  }

  private quote(text: string | null): string {
    if (text === null) return 'null';
    let quoted = this.quoted.get(text);
    if (quoted === undefined) {
      quoted = JSON.stringify(text);
      if (this.quoted.size < MAX_QUOTED) this.quoted.set(text, quoted);
    }
    return quoted;
  }
}
