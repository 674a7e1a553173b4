/**
 * Limits on what a connection may send before it is authenticated: its endpoint's
 * `auth.firstMessageMaxQueued` and `auth.firstMessageMaxBytes`.
 */
export interface HoldLimits {
  /** Messages (or a protocol's packets) held. */
  readonly maxQueued: number;
  /** Bytes held. */
  readonly maxBytes: number;
}

/**
 * The one "hold input until authenticated" buffer: what a client sends while its credential is being
 * checked waits here, in order, and is taken back once the credential is accepted. Past a limit
 * `push` answers the reason to close with; the caller closes with its protocol's code. A protocol also
 * holds in one what arrives behind a message it handles over several turns of the loop (`during`).
 */
export class HeldInput<T> {
  private items: T[] = [];
  private bytes = 0;

  constructor(
    private readonly limits: HoldLimits,
    /** When the input is held, for the reasons `push` and `charge` answer. */
    private readonly during = 'before authentication',
  ) {}

  /** Counts bytes that arrived before authentication without holding them (the gateway's auth message). */
  charge(bytes: number): string | null {
    this.bytes += bytes;
    return this.bytes > this.limits.maxBytes ? `too much data ${this.during}` : null;
  }

  /** Holds `item`; null when it fits, else why the connection must close. */
  push(item: T, bytes: number): string | null {
    const tooMuch = this.charge(bytes);
    if (tooMuch !== null) return tooMuch;
    if (this.items.length >= this.limits.maxQueued) return `too many messages ${this.during}`;
    this.items.push(item);
    return null;
  }

  /** What was held, in arrival order; the buffer is empty afterwards. */
  take(): T[] {
    const items = this.items;
    this.items = [];
    this.bytes = 0;
    return items;
  }
}
