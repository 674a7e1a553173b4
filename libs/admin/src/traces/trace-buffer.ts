import { type TraceRecord } from '#broker/gateway';

/** A record kept with when it was written (epoch ms) and its place in this node's trace. */
export interface KeptRecord {
  readonly atMs: number;
  readonly seq: number;
  readonly record: TraceRecord;
}

/**
 * One trace's records on one node: at most `ratePerSec` a second (a token bucket holding a second's
 * worth; the excess is counted as dropped), the newest `capacity` kept (older ones are overwritten and
 * counted). Sans-IO: the caller gives the time.
 */
export class TraceBuffer {
  private readonly ring: (KeptRecord | undefined)[];
  private next = 0;
  private written = 0;
  private tokens: number;
  private refilledAtMs: number;
  /** Records refused by the rate limit. */
  dropped = 0;

  constructor(
    readonly capacity: number,
    readonly ratePerSec: number,
    nowMs: number,
  ) {
    this.ring = new Array<KeptRecord | undefined>(capacity);
    this.tokens = ratePerSec;
    this.refilledAtMs = nowMs;
  }

  /** Keeps `record` unless the rate limit refuses it (then false, and it counts as dropped). */
  add(record: TraceRecord, nowMs: number): boolean {
    this.refill(nowMs);
    if (this.tokens < 1) {
      this.dropped++;
      return false;
    }
    this.tokens--;
    this.ring[this.next] = { atMs: nowMs, seq: this.written, record };
    this.next = (this.next + 1) % this.capacity;
    this.written++;
    return true;
  }

  /** Records kept and then overwritten by newer ones. */
  get overwritten(): number {
    return Math.max(0, this.written - this.capacity);
  }

  /** How many records are kept now. */
  get size(): number {
    return Math.min(this.written, this.capacity);
  }

  /** The newest `limit` records kept (all of them by default), oldest first. */
  newest(limit = this.capacity): KeptRecord[] {
    const count = Math.min(limit, this.size);
    const out: KeptRecord[] = [];
    for (let i = count; i > 0; i--) {
      out.push(this.ring[(this.next - i + this.capacity) % this.capacity] as KeptRecord);
    }
    return out;
  }

  private refill(nowMs: number): void {
    const elapsed = nowMs - this.refilledAtMs;
    if (elapsed <= 0) return;
    this.tokens = Math.min(this.ratePerSec, this.tokens + (elapsed * this.ratePerSec) / 1000);
    this.refilledAtMs = nowMs;
  }
}
