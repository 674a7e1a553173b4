/** What one received message means for the run. */
export interface Verdict {
  /** A message not seen before by this subscriber (counts towards throughput and latency). */
  readonly fresh: boolean;
  /** Every subscriber now has this message: its publisher may send the next one. */
  readonly completed: boolean;
  readonly error: string | null;
  /** How many messages the error stands for (a gap of n lost messages is n). */
  readonly errorCount: number;
}

/**
 * Per-subscriber, per-publisher sequence checks. MQTT delivers one publisher's messages on one topic
 * in order (MQTT 3.1.1 section 4.6), so each subscriber must see each publisher's sequence numbers
 * 0, 1, 2, ... with no gap and no repeat. Anything else is an error of the server under test.
 */
export class DeliveryTracker {
  /** Completion counts per publisher in a ring: a closed-loop window is far below RING. */
  private static readonly RING = 65536;
  private readonly sent: Uint32Array;
  private readonly next: Uint32Array;
  private readonly copies: Uint32Array;

  constructor(
    private readonly publishers: number,
    private readonly subscribers: number,
  ) {
    this.sent = new Uint32Array(publishers);
    this.next = new Uint32Array(publishers * subscribers);
    this.copies = new Uint32Array(publishers * DeliveryTracker.RING);
  }

  /** Registers a message about to be sent by publisher p; returns its sequence number. */
  published(p: number): number {
    const seq = this.sent[p] as number;
    this.sent[p] = seq + 1;
    return seq;
  }

  delivered(subscriber: number, publisher: number, seq: number): Verdict {
    if (publisher >= this.publishers || subscriber >= this.subscribers) {
      return { fresh: false, completed: false, error: 'message from an unknown publisher', errorCount: 1 };
    }
    if (seq >= (this.sent[publisher] as number)) {
      return { fresh: false, completed: false, error: 'message never sent', errorCount: 1 };
    }
    const index = subscriber * this.publishers + publisher;
    const expected = this.next[index] as number;
    if (seq < expected) {
      return { fresh: false, completed: false, error: 'duplicate or out of order', errorCount: 1 };
    }
    this.next[index] = seq + 1;
    const slot = publisher * DeliveryTracker.RING + (seq % DeliveryTracker.RING);
    const copies = (this.copies[slot] as number) + 1;
    const completed = copies === this.subscribers;
    this.copies[slot] = completed ? 0 : copies;
    const gap = seq - expected;
    return gap === 0
      ? { fresh: true, completed, error: null, errorCount: 0 }
      : { fresh: true, completed, error: 'gap: messages skipped', errorCount: gap };
  }

  /** Messages sent but not yet received, summed over subscribers (lost, if the run is over). */
  outstanding(): number {
    let total = 0;
    for (let s = 0; s < this.subscribers; s++) {
      for (let p = 0; p < this.publishers; p++) {
        total += (this.sent[p] as number) - (this.next[s * this.publishers + p] as number);
      }
    }
    return total;
  }

  /** Sent minus acknowledged QoS 1 messages over all publishers (negative: acknowledged too often). */
  pubacksMissing(pubacks: Uint32Array): number {
    let total = 0;
    for (let p = 0; p < this.publishers; p++) total += (this.sent[p] as number) - (pubacks[p] as number);
    return total;
  }
}
