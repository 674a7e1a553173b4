import { randomBytes } from 'node:crypto';

/**
 * The few RFC 6455 frames the idle population needs, by hand: a `ws` client object per connection
 * costs the generator more memory than the server's own per-connection state being measured.
 */

export const OPCODE = { BINARY: 0x2, CLOSE: 0x8 } as const;

/** One final, masked client frame (clients must mask, section 5.3). */
export function maskedFrame(opcode: number, payload: Buffer, mask: Buffer = randomBytes(4)): Buffer {
  const length = payload.length;
  const header =
    length < 126
      ? Buffer.from([0x80 | opcode, 0x80 | length])
      : length < 65_536
        ? Buffer.from([0x80 | opcode, 0x80 | 126, length >> 8, length & 0xff])
        : null;
  if (header === null) throw new Error(`frame payload of ${length} bytes: not needed here`);
  const masked = Buffer.alloc(length);
  for (let i = 0; i < length; i++) masked[i] = (payload[i] as number) ^ (mask[i % 4] as number);
  return Buffer.concat([header, mask, masked]);
}

export interface ServerFrame {
  readonly opcode: number;
  readonly payload: Buffer;
  /** Bytes of the buffer the frame took, header included. */
  readonly bytes: number;
}

/** The first whole server frame (unmasked) at the start of `buffer`; null until all of it is there. */
export function readServerFrame(buffer: Buffer): ServerFrame | null {
  if (buffer.length < 2) return null;
  const opcode = (buffer[0] as number) & 0x0f;
  if (((buffer[1] as number) & 0x80) !== 0) throw new Error('masked server frame');
  let length = (buffer[1] as number) & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return null;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return null;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  if (buffer.length < offset + length) return null;
  return { opcode, payload: buffer.subarray(offset, offset + length), bytes: offset + length };
}
