/** Longer tokens are verified every time rather than kept: the cache's memory stays bounded by capacity. */
export const MAX_CACHED_TOKEN_LENGTH = 2048;

/**
 * Tokens whose signature was checked, so that a client reconnecting with the same token (a reconnect
 * storm after a deploy, a page reload, a device on a flaky link) skips the HMAC or RSA check and the
 * decoding. Keyed by the whole token string: only the exact bytes that were verified ever hit. The
 * caller re-checks the time-bound claims (exp, nbf) on every hit. Values are frozen, since every
 * connection of that token shares them.
 *
 * Least recently used entries go first, approximately, in two generations of half the capacity each
 * (the scheme of hashlru and quick-lru): new and reused tokens go into the recent generation, and when
 * it is full it becomes the older one and the older one is dropped whole. A hit in the recent
 * generation is one Map lookup; an exact LRU re-inserted the entry on every hit, a delete and a set
 * per handshake (a measurable share of one). A token used again within half the capacity of other
 * tokens is kept; at most the capacity (rounded up to an even number) is held.
 */
export class VerifiedTokenCache<T extends object> {
  private recent = new Map<string, T>();
  private older = new Map<string, T>();
  private readonly generationSize: number;

  constructor(capacity: number) {
    this.generationSize = Math.ceil(capacity / 2);
  }

  get size(): number {
    return this.recent.size + this.older.size;
  }

  get(token: string): T | undefined {
    const recent = this.recent.get(token);
    if (recent !== undefined) return recent;
    const older = this.older.get(token);
    if (older !== undefined) {
      this.older.delete(token);
      this.keep(token, older);
    }
    return older;
  }

  /** Forgets every token (the keys they were checked with changed). */
  clear(): void {
    this.recent.clear();
    this.older.clear();
  }

  /** Keeps the value (frozen, deeply) and returns it. */
  set(token: string, value: T): T {
    deepFreeze(value);
    if (this.generationSize === 0 || token.length > MAX_CACHED_TOKEN_LENGTH) return value;
    // Two handshakes with one token can both miss while its signature is checked: one copy is kept.
    this.older.delete(token);
    this.keep(token, value);
    return value;
  }

  private keep(token: string, value: T): void {
    if (this.recent.size >= this.generationSize && !this.recent.has(token)) {
      this.older = this.recent;
      this.recent = new Map();
    }
    this.recent.set(token, value);
  }
}

function deepFreeze(value: object): void {
  Object.freeze(value);
  for (const inner of Object.values(value)) {
    if (typeof inner === 'object' && inner !== null && !Object.isFrozen(inner)) deepFreeze(inner as object);
  }
}
