/** Longer tokens are verified every time rather than kept: the cache's memory stays bounded by capacity. */
export const MAX_CACHED_TOKEN_LENGTH = 2048;

/**
 * Tokens whose signature was checked, so that a client reconnecting with the same token (a reconnect
 * storm after a deploy, a page reload, a device on a flaky link) skips the HMAC or RSA check and the
 * decoding. Keyed by the whole token string: only the exact bytes that were verified ever hit. The
 * caller re-checks the time-bound claims (exp, nbf) on every hit. Least recently used entries go
 * first. Values are frozen, since every connection of that token shares them.
 */
export class VerifiedTokenCache<T extends object> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(token: string): T | undefined {
    const hit = this.entries.get(token);
    if (hit !== undefined) {
      // Map keeps insertion order: re-inserting marks the entry as the most recently used.
      this.entries.delete(token);
      this.entries.set(token, hit);
    }
    return hit;
  }

  /** Keeps the value (frozen, deeply) and returns it. */
  set(token: string, value: T): T {
    deepFreeze(value);
    if (this.capacity === 0 || token.length > MAX_CACHED_TOKEN_LENGTH) return value;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(token, value);
    return value;
  }
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const inner of Object.values(value)) {
    if (typeof inner === 'object' && inner !== null && !Object.isFrozen(inner)) deepFreeze(inner as object);
  }
}
