import { type Clock } from './clock.js';

export interface HandshakeRateLimits {
  /** Handshakes a second one client address may start, on average; 0: no limit. */
  readonly perSecond: number;
  /** Handshakes it may start at once, before the rate applies. */
  readonly burst: number;
}

interface Bucket {
  tokens: number;
  /** Monotonic milliseconds of the last refill. */
  at: number;
}

/**
 * Handshakes per client address, as a token bucket each (nginx's limit_req, EMQX's max_conn_rate):
 * a client that closes and reconnects in a loop (after each refusal of a costly message, say) is held
 * to `perSecond` handshakes, refused 429 before any credential is checked. Buckets that have filled
 * up again are forgotten, so the map holds only the addresses active within the last
 * `burst / perSecond` seconds, whatever the number of addresses that ever connected.
 */
export class HandshakeRate {
  private readonly buckets = new Map<string, Bucket>();
  /** The map's size at which full buckets are swept out; doubled when a sweep frees too little. */
  private sweepAt = 1024;

  constructor(
    private readonly limits: HandshakeRateLimits,
    private readonly clock: Clock,
  ) {}

  /** Addresses tracked now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Takes one handshake for `address`: 0 when it may go on, else the seconds until it may (at least 1). */
  take(address: string): number {
    const { perSecond, burst } = this.limits;
    if (perSecond === 0) return 0;
    const now = this.clock.monotonic();
    let bucket = this.buckets.get(address);
    if (bucket === undefined) {
      if (this.buckets.size >= this.sweepAt) this.sweep(now);
      bucket = { tokens: burst, at: now };
      this.buckets.set(address, bucket);
    } else {
      bucket.tokens = this.refilled(bucket, now);
      bucket.at = now;
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }

  private refilled(bucket: Bucket, now: number): number {
    return Math.min(this.limits.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limits.perSecond);
  }

  private sweep(now: number): void {
    for (const [address, bucket] of this.buckets) {
      if (this.refilled(bucket, now) >= this.limits.burst) this.buckets.delete(address);
    }
    // Every address still in the map is active: sweeping again at the next new one would scan them all.
    this.sweepAt = Math.max(1024, this.buckets.size * 2);
  }
}
