import { randomInt } from 'node:crypto';

/** WAMP IDs are integers in [1, 2^53] so that every JSON implementation reads them exactly. */
export const MAX_ID = 2 ** 53;

export function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_ID;
}

/**
 * A uniformly random global-scope ID (session and publication IDs must not be guessable): 53 bits
 * as 26 high and 27 low. randomInt draws from Node's cached pool of random bytes, where a randomBytes
 * call per publication would ask the system each time.
 */
export function randomId(): number {
  for (;;) {
    const value = randomInt(2 ** 26) * 2 ** 27 + randomInt(2 ** 27);
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

  /** Whether `id` was issued already (since the last wrap to 1, which 2^53 IDs put beyond reach). */
  issued(id: number): boolean {
    return Number.isInteger(id) && id >= 1 && id <= this.last;
  }
}

/** A random ID not yet a key of `taken` (router-scope subscription and registration IDs). */
export function freshId(taken: { has(id: number): boolean }): number {
  for (;;) {
    const id = randomId();
    if (!taken.has(id)) return id;
  }
}
