import { type LoggerService } from '@nestjs/common';
import { pino, type DestinationStream, type Logger } from 'pino';
import { LineBatch } from './line-batch.js';

/** Header and field paths pino blanks even if a caller logs them by mistake. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["sec-websocket-protocol"]',
  'headers.authorization',
  'headers.cookie',
  'token',
  '*.token',
  'password',
  '*.password',
];

/** Set on a destination that wants pino's per-line metadata (pino.multistream). */
const PINO_METADATA = Symbol.for('pino.metadata');

/** Loggers made by createLogger onto a plain stream: pino's default line format, nothing in between. */
const plain = new WeakSet<Logger>();

/** Whether a line may be written in pino's default format straight onto this logger's stream (DecisionLog). */
export function writesPlainLines(logger: Logger): boolean {
  return plain.has(logger);
}

/** How many characters of log lines are gathered before they go to the stream, and written at once. */
const BATCH_CHARS = 4096;

/**
 * JSON lines on stdout by default, written in 4 KiB batches (a write per line cost a measurable
 * share of each handshake), flushed at least every second and by `flushAndExit` before exiting.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service: 'ws-broker' },
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
  };
  if (destination !== undefined) {
    const logger = pino(options, destination);
    // A multistream routes each line by what pino tells it about the line: only pino may write to it.
    if (!(PINO_METADATA in destination)) plain.add(logger);
    return logger;
  }
  const stdout = 1;
  const lines = new LineBatch(
    pino.destination({ dest: stdout, minLength: BATCH_CHARS, sync: false }),
    stdout,
    BATCH_CHARS,
  );
  const logger = pino(options, lines);
  plain.add(logger);
  // A quiet broker still gets its lines out within a second.
  setInterval(() => logger.flush(), 1000).unref();
  return logger;
}

export function flushAndExit(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
}

/** Routes Nest's own log lines into the same structured stream. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    this.logger.info({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string): void {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string): void {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string): void {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string): void {
    this.logger.trace({ context }, String(message));
  }
}
