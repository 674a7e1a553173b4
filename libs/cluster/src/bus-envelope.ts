/**
 * A bus message on NATS: its metadata in front of the payload, in one buffer. NATS headers would carry
 * the same, but nats.js encodes a header block per publish (a profile of the cluster benchmark put it at a
 * quarter of the NATS path's cost); the metadata of one publisher rarely changes, so ours is encoded once
 * and reused. Layout, big-endian:
 *
 *   u8 version (3) | u8 the origin module's flags (0xFF: none) | u32 boot id | u48 sequence |
 *   u16 length + origin | u16 length + node id |
 *   u16 length + content type (0xFFFF: none) | u16 length + principal (0xFFFF: none) |
 *   u16 length + topic (0: the topic is the subject's) | payload
 *
 * The boot id and sequence let a node tell two copies of one message apart (a message matching two
 * attracted filters), also across a restart of its publisher under the same node id.
 *
 * A message with a sender (BusMessage.sender) is version 4: `u16 length + sender` follows the
 * principal. Every other message stays version 3, byte for byte, so a node of an earlier build drops
 * only the few that carry a sender (a module gives one while it traces that publisher).
 */

const VERSION = 3;
const WITH_SENDER = 4;
const ABSENT = 0xffff;
const MAX_FIELD = 0xfffe;
const FIXED = 1 + 1 + 4 + 6;
const NO_FLAGS = 0xff;

export interface EnvelopeMeta {
  readonly origin: string;
  readonly node: string;
  readonly contentType: string | undefined;
  readonly principal: string | null;
}

export interface Envelope extends EnvelopeMeta {
  /** The origin module's own bits about the message (BusMessage.flags), as it published them. */
  readonly flags: number | undefined;
  readonly boot: number;
  readonly seq: number;
  /** The publisher's id within its module (BusMessage.sender), or undefined. */
  readonly sender: string | undefined;
  /** Empty when the topic is the subject's. */
  readonly topic: string;
  readonly payload: Uint8Array;
}

function field(out: Buffer[], text: string | undefined | null): void {
  const length = Buffer.alloc(2);
  if (text === undefined || text === null) {
    length.writeUInt16BE(ABSENT);
    out.push(length);
    return;
  }
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.byteLength > MAX_FIELD) throw new RangeError('a bus envelope field is longer than 65534 bytes');
  length.writeUInt16BE(bytes.byteLength);
  out.push(length, bytes);
}

/** The encoded metadata of one publisher (origin, node, content type, principal): made once, reused. */
export function encodeMeta(meta: EnvelopeMeta): Buffer {
  const out: Buffer[] = [];
  field(out, meta.origin);
  field(out, meta.node);
  field(out, meta.contentType);
  field(out, meta.principal);
  return Buffer.concat(out);
}

/**
 * One message: the fixed header, the publisher's encoded metadata, the sender when there is one, the
 * topic when it is not the subject's, the payload.
 */
export function encodeEnvelope(
  boot: number,
  seq: number,
  meta: Buffer,
  topic: string,
  payload: Uint8Array,
  flags?: number,
  sender?: string,
): Buffer {
  if (flags !== undefined && !(Number.isInteger(flags) && flags >= 0 && flags < NO_FLAGS))
    throw new RangeError('bus message flags are an integer from 0 to 254');
  const topicBytes = topic === '' ? 0 : Buffer.byteLength(topic);
  const senderBytes = sender === undefined ? 0 : Buffer.byteLength(sender);
  if (senderBytes > MAX_FIELD) throw new RangeError('a bus envelope field is longer than 65534 bytes');
  const senderSize = sender === undefined ? 0 : 2 + senderBytes;
  const size = FIXED + meta.byteLength + senderSize + 2 + topicBytes + payload.byteLength;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt8(sender === undefined ? VERSION : WITH_SENDER, 0);
  out.writeUInt8(flags ?? NO_FLAGS, 1);
  out.writeUInt32BE(boot, 2);
  out.writeUIntBE(seq, 6, 6);
  let at = FIXED + meta.copy(out, FIXED);
  if (sender !== undefined) {
    out.writeUInt16BE(senderBytes, at);
    at += 2;
    at += out.write(sender, at, 'utf8');
  }
  out.writeUInt16BE(topicBytes, at);
  at += 2;
  if (topicBytes > 0) at += out.write(topic, at, 'utf8');
  out.set(payload, at);
  return out;
}

/** The envelope in `data`, or null when it is not one (the caller logs and drops it). */
export function decodeEnvelope(data: Uint8Array): Envelope | null {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const version = bytes.byteLength < FIXED ? 0 : bytes.readUInt8(0);
  if (version !== VERSION && version !== WITH_SENDER) return null;
  let at = FIXED;
  const read = (): string | null | undefined => {
    if (at + 2 > bytes.byteLength) return undefined;
    const length = bytes.readUInt16BE(at);
    at += 2;
    if (length === ABSENT) return null;
    if (at + length > bytes.byteLength) return undefined;
    const text = bytes.toString('utf8', at, at + length);
    at += length;
    return text;
  };
  const origin = read();
  const node = read();
  const contentType = read();
  const principal = read();
  if (typeof origin !== 'string' || origin === '' || typeof node !== 'string' || node === '') return null;
  if (contentType === undefined || principal === undefined) return null;
  const sender = version === WITH_SENDER ? read() : undefined;
  if (version === WITH_SENDER && typeof sender !== 'string') return null;
  if (at + 2 > bytes.byteLength) return null;
  const topicBytes = bytes.readUInt16BE(at);
  at += 2;
  if (at + topicBytes > bytes.byteLength) return null;
  const topic = bytes.toString('utf8', at, at + topicBytes);
  at += topicBytes;
  const flags = bytes.readUInt8(1);
  return {
    flags: flags === NO_FLAGS ? undefined : flags,
    boot: bytes.readUInt32BE(2),
    seq: bytes.readUIntBE(6, 6),
    origin,
    node,
    contentType: contentType ?? undefined,
    principal,
    sender: sender ?? undefined,
    topic,
    payload: bytes.subarray(at),
  };
}
