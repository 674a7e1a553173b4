import { randomBytes } from 'node:crypto';

/** WAMP IDs are integers in [1, 2^53] so that every JSON implementation reads them exactly. */
export const MAX_ID = 2 ** 53;

export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID;
}

/** A uniformly random global-scope ID (session and publication IDs must not be guessable). */
export function randomId(): number {
  for (;;) {
    const bytes = randomBytes(7);
    // 53 bits: the low 5 bits of the first byte and the 6 other bytes.
    const value = (bytes.readUInt8(0) & 0x1f) * 2 ** 48 + bytes.readUIntBE(1, 6);
    if (value !== 0) return value;
  }
}

/** Session-scope request IDs the router issues (INVOCATION): 1, 2, ... wrapping after 2^53. */
export class SequentialIds {
  /** `last` is the ID issued before the first `next()`. */
  constructor(private last = 0) {}

  next(): number {
    this.last = this.last >= MAX_ID ? 1 : this.last + 1;
    return this.last;
  }
}

/** A random ID not yet a key of `taken` (router-scope subscription and registration IDs). */
export function freshId(taken: { has(id: number): boolean }): number {
  for (;;) {
    const id = randomId();
    if (!taken.has(id)) return id;
  }
}
