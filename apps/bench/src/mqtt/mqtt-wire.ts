import mqttPacket from 'mqtt-packet';

/**
 * The load generator's MQTT 3.1.1 wire code. Control packets (CONNECT, SUBSCRIBE) are encoded by
 * mqtt-packet; PUBLISH is encoded once per publisher by mqtt-packet and then patched per message, and
 * incoming packets are split and read by hand: mqtt-packet's parser allocates an object graph per
 * packet, which at tens of thousands of messages per second would make the load generator the
 * bottleneck it must not be.
 */

export const PACKET = { CONNACK: 2, PUBLISH: 3, PUBACK: 4, SUBACK: 9, PINGRESP: 13 } as const;

/** publisher index (u16), sequence number (u32), send time (float64, performance.now()), padding. */
export const PAYLOAD_BYTES = 64;
const PUBLISHER_OFFSET = 0;
const SEQ_OFFSET = 2;
const SENT_AT_OFFSET = 6;

/** A 3.1.1 CONNECT; `clean` false asks for a persistent session (kept, with its messages, while away). */
export function connectPacket(clientId: string, clean = true): Buffer {
  return mqttPacket.generate({
    cmd: 'connect',
    protocolId: 'MQTT',
    protocolVersion: 4,
    clientId,
    clean,
    // Long enough for a whole round without PINGREQ traffic; every server enforces 1.5 times it.
    keepalive: 600,
  });
}

export function subscribePacket(topic: string, qos: 0 | 1, messageId: number): Buffer {
  return mqttPacket.generate({
    cmd: 'subscribe',
    messageId,
    subscriptions: [{ topic, qos }],
  });
}

export function pubackPacket(packetId: number): Buffer {
  return Buffer.from([PACKET.PUBACK << 4, 2, packetId >> 8, packetId & 0xff]);
}

/** A PUBLISH of one publisher's messages: only the packet id and the payload's fields change. */
export class PublishTemplate {
  private readonly template: Buffer;
  private readonly payloadOffset: number;

  constructor(
    topic: string,
    readonly qos: 0 | 1,
    publisher: number,
  ) {
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    payload.writeUInt16BE(publisher, PUBLISHER_OFFSET);
    this.template = mqttPacket.generate({
      cmd: 'publish',
      topic,
      payload,
      qos,
      messageId: qos > 0 ? 1 : undefined,
      retain: false,
      dup: false,
    });
    this.payloadOffset = this.template.length - PAYLOAD_BYTES;
  }

  /** A fresh buffer per message: ws may still hold the previous one in its send queue. */
  build(seq: number, sentAt: number, packetId: number): Buffer {
    const packet = Buffer.from(this.template);
    if (this.qos > 0) packet.writeUInt16BE(packetId, this.payloadOffset - 2);
    packet.writeUInt32BE(seq, this.payloadOffset + SEQ_OFFSET);
    packet.writeDoubleBE(sentAt, this.payloadOffset + SENT_AT_OFFSET);
    return packet;
  }
}

/** Packet ids run 1..65535 and wrap; a window far below 65535 never reuses one still in flight. */
export function packetIdFor(seq: number): number {
  return (seq % 65535) + 1;
}

export interface ReceivedPublish {
  readonly qos: number;
  /** 0 for QoS 0. */
  readonly packetId: number;
  readonly publisher: number;
  readonly seq: number;
  readonly sentAt: number;
  readonly payloadBytes: number;
}

/** Reads a whole PUBLISH packet (fixed header included) in the bench payload format; null if malformed. */
export function readPublish(packet: Buffer): ReceivedPublish | null {
  const qos = ((packet[0] as number) >> 1) & 3;
  const header = fixedHeaderLength(packet, 0);
  if (header === null) return null;
  let offset = header.headerBytes;
  if (offset + 2 > packet.length) return null;
  offset += 2 + packet.readUInt16BE(offset);
  let packetId = 0;
  if (qos > 0) {
    if (offset + 2 > packet.length) return null;
    packetId = packet.readUInt16BE(offset);
    offset += 2;
  }
  const payloadBytes = packet.length - offset;
  if (payloadBytes < SENT_AT_OFFSET + 8) return null;
  return {
    qos,
    packetId,
    publisher: packet.readUInt16BE(offset + PUBLISHER_OFFSET),
    seq: packet.readUInt32BE(offset + SEQ_OFFSET),
    sentAt: packet.readDoubleBE(offset + SENT_AT_OFFSET),
    payloadBytes,
  };
}

/** The packet id of a PUBACK or SUBACK (bytes 2 and 3). */
export function packetIdOf(packet: Buffer): number {
  return packet.length >= 4 ? packet.readUInt16BE(2) : -1;
}

/** Bytes of the fixed header and the remaining length that follows it; null until all of it is there. */
export function fixedHeaderLength(
  buffer: Buffer,
  start: number,
): { headerBytes: number; remaining: number } | null {
  let remaining = 0;
  let multiplier = 1;
  for (let i = 1; i <= 4; i++) {
    if (start + i >= buffer.length) return null;
    const byte = buffer[start + i] as number;
    remaining += (byte & 0x7f) * multiplier;
    if ((byte & 0x80) === 0) return { headerBytes: i + 1, remaining };
    multiplier *= 128;
  }
  throw new Error('malformed remaining length (more than 4 bytes)');
}

/**
 * Reassembles MQTT packets from WebSocket frames: a frame may hold several packets and a packet may
 * span frames (Aedes, writing through a stream, sends a PUBLISH's parts as separate frames).
 */
export class PacketSplitter {
  private pending: Buffer | null = null;

  push(chunk: Buffer, onPacket: (packet: Buffer) => void): void {
    let buffer = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    this.pending = null;
    let start = 0;
    while (start < buffer.length) {
      const header = fixedHeaderLength(buffer, start);
      const end = header === null ? Infinity : start + header.headerBytes + header.remaining;
      if (end > buffer.length) break;
      onPacket(start === 0 && end === buffer.length ? buffer : buffer.subarray(start, end));
      start = end;
    }
    if (start < buffer.length) {
      buffer = buffer.subarray(start);
      // A copy, so a small remainder does not keep a large frame alive.
      this.pending = Buffer.from(buffer);
    }
  }
}
