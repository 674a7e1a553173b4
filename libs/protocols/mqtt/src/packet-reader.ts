import mqttPacket, { type Packet } from 'mqtt-packet';
import { quickRead, quickWrite } from './quick-codec.js';
import { MqttProtocolError, RC } from './reason-codes.js';
import { internalsOf, type Parser, type ParserInternals } from './mqtt-packet-internals.js';
import { strictParser } from './strict-strings.js';

/** Bytes of a whole packet whose fixed header announced `remaining` bytes (section 2.2.3). */
export function packetSize(remaining: number): number {
  const lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4;
  return 1 + lengthBytes + remaining;
}

/** Whether `data` is a run of complete packets, none cut short (a malformed length counts as no). */
function holdsWholePackets(data: Buffer): boolean {
  let offset = 0;
  while (offset < data.length) {
    let remaining = 0;
    let at = offset + 1;
    for (let shift = 0; ; shift += 7) {
      if (at >= data.length || shift > 21) return false;
      const byte = data[at++] as number;
      remaining += (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) break;
    }
    offset = at + remaining;
  }
  return offset === data.length;
}

/** The state is that of a parser between packets: nothing held, nothing half-read. */
function idle(parser: ParserInternals): boolean {
  return parser._list.length === 0 && parser._stateCounter === 0 && parser.packet.length === -1;
}

/**
 * The parser readers borrow for data made of whole packets, which is nearly all of it over WebSocket
 * (clients send a packet per message). mqtt-packet's parser is an event emitter holding a buffer-list
 * stream, about 1.5 KB of heap; one per connection was the largest part of an idle connection's heap
 * after the socket's own. It is used by one reader at a time and left idle after each use, set for
 * that reader's protocol version; if it is not idle after a parse (malformed data, a handler that
 * threw), it is replaced, so nothing of one connection reaches the next.
 */
class SharedParser {
  private readonly settings: { protocolVersion: number } = { protocolVersion: 4 };
  private parser = this.create();
  private reader: PacketReader | null = null;

  get busy(): boolean {
    return this.reader !== null;
  }

  /** Parses `data` for `reader`; returns the version to parse its next data for (a CONNECT sets it). */
  parse(reader: PacketReader, version: number, data: Buffer): number {
    const parser = this.parser;
    const state = internalsOf(parser);
    this.reader = reader;
    this.settings.protocolVersion = version;
    state.settings = this.settings;
    try {
      parser.parse(data);
      return state.settings.protocolVersion ?? version;
    } finally {
      this.reader = null;
      // Not the CONNECT packet it may have adopted as its settings: that holds the password.
      state.settings = this.settings;
      if (!idle(state)) this.parser = this.create();
    }
  }

  private create(): Parser {
    const parser = strictParser(this.settings);
    parser.on('packet', (packet: Packet) => this.reader?.accept(packet));
    parser.on('error', (err: Error) => this.reader?.malformed(err));
    return parser;
  }
}

const shared = new SharedParser();

/** Where a reader's packets go, and its failure: after one, it reads nothing more. */
export interface PacketHandler {
  onPacket(packet: Packet): void;
  onMalformed(error: MqttProtocolError): void;
}

/**
 * Turns a byte stream (WebSocket frames or TCP chunks: packets may span chunks and a chunk may hold
 * several) into packets. A packet whose header announces more than `maxPacketSize` fails as soon as
 * the header is in, before its body is buffered. Chunks of whole packets go through the shared parser;
 * a packet cut across chunks gets a parser of this reader's own until its bytes are all in.
 */
export class PacketReader {
  private own: Parser | null = null;
  private version = 4;
  private failed = false;

  constructor(
    private readonly maxPacketSize: number,
    /** An object with methods, not two closures: a broker holds a reader per connection. */
    private readonly handler: PacketHandler,
  ) {}

  push(data: Buffer): void {
    if (this.failed) return;
    const quick = this.own === null ? quickRead(data, this.version) : null;
    if (quick !== null) return this.accept(quick);
    try {
      if (this.own === null && !shared.busy && holdsWholePackets(data)) {
        this.version = shared.parse(this, this.version, data);
      } else {
        this.parseOwn(data);
      }
    } catch (err) {
      if (!(err instanceof MqttProtocolError)) throw err;
      this.fail(err);
    }
  }

  /** A packet the parser read for this reader. */
  accept(packet: Packet): void {
    if (this.failed) return;
    if (packetSize(packet.length ?? 0) > this.maxPacketSize) return this.fail(tooLarge(this.maxPacketSize));
    this.handler.onPacket(packet);
  }

  /** The parser refused this reader's bytes. */
  malformed(err: Error): void {
    this.fail(new MqttProtocolError(RC.malformed, `malformed packet: ${err.message}`));
  }

  private parseOwn(data: Buffer): void {
    let own = this.own;
    if (own === null) {
      own = this.own = strictParser({ protocolVersion: this.version });
      own.on('packet', (packet: Packet) => this.accept(packet));
      own.on('error', (err: Error) => this.malformed(err));
    }
    const state = internalsOf(own);
    own.parse(data);
    this.version = state.settings.protocolVersion ?? this.version;
    const pending = state.packet.length;
    if (!this.failed && pending > 0 && packetSize(pending) > this.maxPacketSize) {
      return this.fail(tooLarge(this.maxPacketSize));
    }
    // All its bytes in: the next chunk may go through the shared parser again.
    if (idle(state)) this.own = null;
  }

  private fail(error: MqttProtocolError): void {
    if (this.failed) return;
    this.failed = true;
    this.own = null;
    this.handler.onMalformed(error);
  }
}

function tooLarge(max: number): MqttProtocolError {
  return new MqttProtocolError(RC.packetTooLarge, `packet larger than the maximum packet size ${max}`);
}

/** One packet's bytes for the connection's protocol version. */
export function encodePacket(packet: Packet, protocolVersion: number): Buffer {
  return quickWrite(packet, protocolVersion) ?? mqttPacket.generate(packet, { protocolVersion });
}
