import mqttPacket from 'mqtt-packet';

export type Parser = ReturnType<typeof mqttPacket.parser>;

/**
 * What the broker reads and replaces of mqtt-packet's (9.x) parser beyond its typed API, in one place;
 * mqtt-packet-internals.spec.ts checks it on a real parser and fails loudly when an upgrade moves it.
 */
export interface ParserInternals {
  /** The protocol version it parses for; replaced by the CONNECT packet itself once one is parsed. */
  settings: { protocolVersion?: number };
  /** The packet in progress: its remaining length is known once the fixed header is in, else -1. */
  readonly packet: { readonly length: number };
  /** The bytes held (a BufferList) and the read position in them. */
  readonly _list: { readonly length: number; slice(start: number, end: number): Buffer };
  _pos: number;
  /** Which part of a packet it is reading; 0 between packets. */
  readonly _stateCounter: number;
  /** Its string reader (two length bytes, then the string), replaceable per parser. */
  _parseString(): string | null;
  /** Fails the parse with `err` ('error' event). */
  _emitError(err: Error): void;
}

export function internalsOf(parser: Parser): ParserInternals {
  return parser as unknown as ParserInternals;
}

/** mqtt-packet's own string reader, taken before any parser is changed. */
export const parseString = (Object.getPrototypeOf(mqttPacket.parser()) as ParserInternals)._parseString;
