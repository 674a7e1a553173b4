import { type Envelope } from './bus-envelope.js';

/** NATS writes the copies of one message for one connection back to back; a short window catches them. */
const RECENT_WINDOW = 1024;

/** Publishers whose recent sequence numbers are kept (the oldest forgotten past it). */
const MAX_PUBLISHERS = 256;

/** Per publishing process, the sequence numbers seen lately: an attracted message matching two filters comes twice. */
interface Recent {
  readonly seen: Set<number>;
  readonly order: number[];
}

/** The messages attracted lately, by publishing process, to deliver each to 'node'-reach subscriptions once. */
export class RecentMessages {
  private readonly recent = new Map<string, Recent>();

  /** Forgets the publishing processes of a node that is gone. */
  forgetNode(node: string): void {
    for (const key of this.recent.keys()) if (key.startsWith(`${node}\u0000`)) this.recent.delete(key);
  }

  /** Whether this copy of a message already came through another attracted filter. */
  isRepeat(envelope: Envelope): boolean {
    const publisher = `${envelope.node}\u0000${envelope.boot}`;
    let recent = this.recent.get(publisher);
    if (recent === undefined) {
      if (this.recent.size >= MAX_PUBLISHERS) this.recent.delete(this.recent.keys().next().value as string);
      this.recent.set(publisher, (recent = { seen: new Set(), order: [] }));
    }
    if (recent.seen.has(envelope.seq)) return true;
    recent.seen.add(envelope.seq);
    recent.order.push(envelope.seq);
    if (recent.order.length > RECENT_WINDOW) recent.seen.delete(recent.order.shift() as number);
    return false;
  }
}
