import { type Delivery } from './delivery.js';

/** What a queued delivery costs: its payload and topic (the rest is small and fixed). */
function costOf(delivery: Delivery): number {
  return delivery.message.payload.byteLength + delivery.message.topic.length;
}

/**
 * A session's QoS 1/2 deliveries waiting for room in flight or for the client to return, bounded in
 * count and bytes. Drop policy: the oldest messages make room for the new one; a message larger than
 * the whole byte bound is dropped itself.
 */
export class DeliveryQueue {
  private readonly items: Delivery[] = [];
  private totalBytes = 0;

  get length(): number {
    return this.items.length;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** Queues `delivery` and returns what was dropped to keep the bounds (possibly `delivery` itself). */
  push(delivery: Delivery, maxCount: number, maxBytes: number): Delivery[] {
    const cost = costOf(delivery);
    if (maxCount === 0 || cost > maxBytes) return [delivery];
    const dropped: Delivery[] = [];
    while (this.items.length >= maxCount || this.totalBytes + cost > maxBytes) {
      dropped.push(this.shift() as Delivery);
    }
    this.items.push(delivery);
    this.totalBytes += cost;
    return dropped;
  }

  /** Takes out every queued delivery that `matches`, keeping the others in order. */
  takeWhere(matches: (delivery: Delivery) => boolean): Delivery[] {
    const taken = this.items.filter(matches);
    if (taken.length === 0) return taken;
    const kept = this.items.filter((delivery) => !matches(delivery));
    this.items.length = 0;
    this.items.push(...kept);
    this.totalBytes = kept.reduce((sum, delivery) => sum + costOf(delivery), 0);
    return taken;
  }

  /** The delivery `shift` would take, left in place. */
  peek(): Delivery | undefined {
    return this.items[0];
  }

  shift(): Delivery | undefined {
    const delivery = this.items.shift();
    if (delivery !== undefined) this.totalBytes -= costOf(delivery);
    return delivery;
  }
}
