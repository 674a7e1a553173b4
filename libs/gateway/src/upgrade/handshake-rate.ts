import { type Clock } from '#broker/kit';

export interface HandshakeRateLimits {
  /** Handshakes a second one client address may start, on average; 0: no limit. */
  readonly perSecond: number;
  /** Handshakes it may start at once, before the rate applies. */
  readonly burst: number;
}

interface Bucket {
  tokens: number;
  /** Handshakes refused beyond the rate, less what the rate has paid back since (see `overdrawn`). */
  debt: number;
  /** Monotonic milliseconds of the last refill. */
  at: number;
}

/**
 * Handshakes per client address, as a token bucket each (nginx's limit_req, EMQX's max_conn_rate):
 * a client that closes and reconnects in a loop (after each refusal of a costly message, say) is held
 * to `perSecond` handshakes, refused 429 before any credential is checked. Each refusal is a debt
 * the rate pays back; an address owing more than its burst is flooding, and its connections are refused
 * at accept (`overdrawn`), before the HTTP parser reads a byte, until the debt is paid below that.
 * Buckets that have filled up again, with nothing owed, are forgotten, so the map holds only the
 * addresses active within the last `2 * burst / perSecond` seconds, whatever the number of addresses
 * that ever connected.
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
      bucket = { tokens: burst, debt: 0, at: now };
      this.buckets.set(address, bucket);
    } else {
      this.settle(bucket, now);
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    bucket.debt = Math.min(2 * burst, bucket.debt + 1);
    return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
  }

  /**
   * `address` flooded something else (HTTP/2 streams reset at once): it owes the most a bucket can,
   * so its connections are refused at accept until the rate has paid back its burst.
   */
  penalize(address: string): void {
    const { perSecond, burst } = this.limits;
    if (perSecond === 0) return;
    const now = this.clock.monotonic();
    let bucket = this.buckets.get(address);
    if (bucket === undefined) {
      bucket = { tokens: 0, debt: 0, at: now };
      this.buckets.set(address, bucket);
    } else this.settle(bucket, now);
    bucket.debt = 2 * burst;
  }

  /** Whether `address` owes more than its burst in refused handshakes: a flood, refused at accept. */
  overdrawn(address: string): boolean {
    const bucket = this.buckets.get(address);
    if (bucket === undefined || this.limits.perSecond === 0) return false;
    this.settle(bucket, this.clock.monotonic());
    return bucket.debt > this.limits.burst;
  }

  /** Brings a bucket to `now`: tokens refilled, debt paid back, at the same rate. */
  private settle(bucket: Bucket, now: number): void {
    const paid = ((now - bucket.at) / 1000) * this.limits.perSecond;
    bucket.tokens = Math.min(this.limits.burst, bucket.tokens + paid);
    bucket.debt = Math.max(0, bucket.debt - paid);
    bucket.at = now;
  }

  private sweep(now: number): void {
    for (const [address, bucket] of this.buckets) {
      this.settle(bucket, now);
      if (bucket.tokens >= this.limits.burst && bucket.debt === 0) this.buckets.delete(address);
    }
    // Every address still in the map is active: sweeping again at the next new one would scan them all.
    this.sweepAt = Math.max(1024, this.buckets.size * 2);
  }
}
