import { Logger as NestLogger, type LoggerService } from '@nestjs/common';
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

/** pino's numbers for its levels, as Nest's methods take them. */
const WARN = 40;
const ERROR = 50;
const INFO = 30;

/**
 * A broker logger that writes through Nest's Logger (context 'Broker'), so an application's own
 * logger (app.useLogger, nestjs-pino) gets the broker's lines: the message with its fields as JSON,
 * redaction applied. BrokerModule uses it when the application gives no pino logger of its own.
 */
export function createNestRoutedLogger(level: string): Logger {
  const nest = new NestLogger('Broker');
  return pino(
    { level, base: undefined, timestamp: false, redact: { paths: REDACT_PATHS, censor: '[REDACTED]' } },
    {
      write(line: string): void {
        const { level: severity, msg, ...fields } = JSON.parse(line) as { level: number; msg?: string };
        const text = Object.keys(fields).length > 0 ? `${msg ?? ''} ${JSON.stringify(fields)}` : (msg ?? '');
        if (severity >= ERROR) nest.error(text);
        else if (severity >= WARN) nest.warn(text);
        else if (severity >= INFO) nest.log(text);
        else nest.debug(text);
      },
    },
  );
}

export function flushAndExit(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
}

/** The contexts of Nest's own info lines while it boots: modules loaded, routes mapped, started. */
const NEST_BOOT_CONTEXTS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'WebSocketsController',
]);

/** Routes Nest's own log lines into the same structured stream. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}

  log(message: unknown, context?: string): void {
    // Nest's boot narration (a line per module, controller and route) is for debugging, not for a start-up.
    if (context !== undefined && NEST_BOOT_CONTEXTS.has(context))
      this.logger.debug({ context }, String(message));
    else this.logger.info({ context }, String(message));
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
