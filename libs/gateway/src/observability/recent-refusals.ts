/** One refused handshake, as the dashboard lists it. */
export interface Refusal {
  /** Epoch milliseconds. */
  readonly at: number;
  readonly status: number;
  /** The endpoint's path; null when the request matched none (or Node's parser refused it). */
  readonly endpoint: string | null;
  /** The problem's title and detail, as the client got them in the refusal's body. */
  readonly title: string;
  readonly detail: string;
}

/** What a refusal keeps of a detail: a path the client chose may be as long as a header. */
const MAX_DETAIL_CHARS = 200;

/**
 * The latest refused handshakes, in a fixed ring: a flood of refusals costs one slot write each and
 * never more memory. Only the gateway's own texts and the request's path go in, never a credential.
 */
export class RecentRefusals {
  private readonly ring: Refusal[] = [];
  private next = 0;
  /** Refusals since start, so a reader tells a new one from the same list. */
  total = 0;

  constructor(private readonly capacity: number) {}

  add(refusal: Refusal): void {
    const kept =
      refusal.detail.length <= MAX_DETAIL_CHARS
        ? refusal
        : { ...refusal, detail: `${refusal.detail.slice(0, MAX_DETAIL_CHARS)}…` };
    if (this.ring.length < this.capacity) this.ring.push(kept);
    else this.ring[this.next] = kept;
    this.next = (this.next + 1) % this.capacity;
    this.total++;
  }

  /** Newest first. */
  latest(): Refusal[] {
    const ordered = [...this.ring.slice(this.next), ...this.ring.slice(0, this.next)];
    return ordered.reverse();
  }
}
