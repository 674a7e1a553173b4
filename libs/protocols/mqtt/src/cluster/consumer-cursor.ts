import { type ConsumerInfo } from '@nats-io/jetstream';

/** How many acknowledged stream sequences a cursor remembers. */
const REMEMBERED_ACKS = 4096;

/** What a message read from a consumer is: new, a repeat of one delivered before, or one already done. */
export type Reading = 'new' | 'again' | 'done';

/**
 * What this node knows of one consumer's deliveries, to tell nats-server's missteps from new messages.
 * nats-server before 2.10.16 (nats-io/nats-server#5305) steps a pull consumer back one sequence when a
 * redelivery finds no pull request waiting, and then delivers a message it delivered before as if for
 * the first time (delivery count 1): one still in flight must go out again with DUP; one already
 * acknowledged (still in the stream for another consumer) must not go out at all, or a QoS 2 client
 * that completed it would take it for a new message. Acknowledged means at or below the consumer's ack
 * floor when its feed opened here, or acknowledged here since (by sequence and the time it was stored:
 * a nats-server that lost writes gives their sequences to new messages).
 */
export class ConsumerCursor {
  private highest = 0;
  private ackFloor = 0;
  /** When the consumer the cursor last opened was made (ms): one made again later starts over. */
  private created = 0;
  /** Sequences acknowledged here, with when the stream stored each (ms). */
  private readonly acked = new Map<number, number>();

  /** The consumer as the server described it when its feed opened (or reopened) here. */
  opened(info: ConsumerInfo): void {
    const created = Date.parse(info.created);
    // An earlier consumer under this name, read late: its ack floor is not the consumer's any more.
    if (created < this.created) return;
    if (created > this.created) {
      this.created = created;
      this.ackFloor = 0;
      this.acked.clear();
    }
    this.highest = Math.max(this.highest, info.delivered.stream_seq);
    this.ackFloor = Math.max(this.ackFloor, info.ack_floor.stream_seq);
  }

  /**
   * The session this cursor serves was given sequences up to `sequence` before (on the node it came
   * from): a nats-server that forgot those deliveries (killed right after them) hands them out again as
   * new, and they are repeats.
   */
  deliveredUpTo(sequence: number): void {
    this.highest = Math.max(this.highest, sequence);
  }

  /**
   * NATS came back: a restarted nats-server may have rolled its stream back and give sequences out
   * again, so nothing is taken for acknowledged any more (a new message under a reused sequence must
   * not be dropped); what was delivered is still repeated with DUP.
   */
  restarted(): void {
    this.ackFloor = 0;
    this.acked.clear();
  }

  /**
   * The stream ends at `lastSequence`: a nats-server that lost writes it had acknowledged gives their
   * sequences to new messages, so none past it is taken for acknowledged (a new message under one is
   * delivered, with DUP: it may be a repeat).
   */
  endsAt(lastSequence: number): void {
    this.ackFloor = Math.min(this.ackFloor, lastSequence);
    for (const sequence of this.acked.keys()) if (sequence > lastSequence) this.acked.delete(sequence);
  }

  read(streamSequence: number, redelivered: boolean, storedMs: number): Reading {
    if (streamSequence > this.highest) {
      this.highest = streamSequence;
      return 'new';
    }
    if (redelivered) return 'again';
    if (streamSequence <= this.ackFloor || this.acked.get(streamSequence) === storedMs) return 'done';
    return 'again';
  }

  acknowledged(streamSequence: number, storedMs: number): void {
    this.acked.set(streamSequence, storedMs);
    if (this.acked.size > REMEMBERED_ACKS) this.acked.delete(this.acked.keys().next().value as number);
  }
}
