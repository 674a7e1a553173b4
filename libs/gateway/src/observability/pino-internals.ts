import { symbols, type Logger } from 'pino';

/**
 * What the broker reads of a pino logger beyond its API, through pino.symbols (pino's documented way
 * in for integrations, though not a stable API); pino-internals.spec.ts checks it on a real logger
 * and fails loudly when an upgrade of pino changes it.
 */
interface LoggerInternals {
  readonly [symbols.streamSym]: { write(line: string): unknown };
  readonly [symbols.chindingsSym]: string;
}

/** The destination the logger writes its lines to. */
export function streamOf(logger: Logger): { write(line: string): unknown } {
  return (logger as unknown as LoggerInternals)[symbols.streamSym];
}

/** The logger's bindings, already serialized as pino puts them in a line: `,"key":value...`. */
export function chindingsOf(logger: Logger): string {
  return (logger as unknown as LoggerInternals)[symbols.chindingsSym];
}
