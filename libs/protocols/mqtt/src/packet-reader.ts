import mqttPacket, { type Packet } from 'mqtt-packet';
import { MqttProtocolError, RC } from './reason-codes.js';

/** The in-progress packet mqtt-packet keeps: its remaining length is known once the fixed header is in. */
interface ParserState {
  readonly packet: { readonly length: number };
}

/** Bytes of a whole packet whose fixed header announced `remaining` bytes (section 2.2.3). */
export function packetSize(remaining: number): number {
  const lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4;
  return 1 + lengthBytes + remaining;
}

/**
 * Turns a byte stream (WebSocket frames or TCP chunks: packets may span chunks and a chunk may hold
 * several) into packets. A packet whose header announces more than `maxPacketSize` fails as soon as
 * the header is in, before its body is buffered.
 */
export class PacketReader {
  private readonly parser = mqttPacket.parser({ protocolVersion: 4 });
  private failed = false;

  constructor(
    private readonly maxPacketSize: number,
    private readonly onPacket: (packet: Packet) => void,
    private readonly onError: (error: MqttProtocolError) => void,
  ) {
    this.parser.on('packet', (packet: Packet) => {
      if (this.failed) return;
      if (packetSize(packet.length ?? 0) > this.maxPacketSize) return this.fail(tooLarge(this.maxPacketSize));
      this.onPacket(packet);
    });
    this.parser.on('error', (err: Error) =>
      this.fail(new MqttProtocolError(RC.malformed, `malformed packet: ${err.message}`)),
    );
  }

  push(data: Buffer): void {
    if (this.failed) return;
    try {
      this.parser.parse(data);
    } catch (err) {
      if (!(err instanceof MqttProtocolError)) throw err;
      return this.fail(err);
    }
    const pending = (this.parser as unknown as ParserState).packet.length;
    if (!this.failed && pending > 0 && packetSize(pending) > this.maxPacketSize) {
      this.fail(tooLarge(this.maxPacketSize));
    }
  }

  private fail(error: MqttProtocolError): void {
    if (this.failed) return;
    this.failed = true;
    this.onError(error);
  }
}

function tooLarge(max: number): MqttProtocolError {
  return new MqttProtocolError(RC.packetTooLarge, `packet larger than the maximum packet size ${max}`);
}

/** One packet's bytes for the connection's protocol version. */
export function encodePacket(packet: Packet, protocolVersion: number): Buffer {
  return mqttPacket.generate(packet, { protocolVersion });
}
