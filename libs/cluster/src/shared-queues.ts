import { type BusHandler, type BusMessage, type BusSubscription } from '#broker/bus';
import { createHash } from 'node:crypto';
import { type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';

/** A queue of `share` on this node: its handlers take turns at what NATS gives this node. */
interface Shared {
  readonly handlers: BusHandler[];
  cursor: number;
  readonly subscriptions: Subscription[];
}

/** What the bus makes of a message NATS gave a queue: the message for the filter, or null to skip it. */
export type SharedReceiver = (filter: string, msg: Msg) => BusMessage | null;

/**
 * The `share` queues of NatsTopicBus on this node, by queue and filter: one NATS queue subscription
 * per subject of the filter, whose messages the queue's handlers here take in turns.
 */
export class SharedQueues {
  private readonly shares = new Map<string, Shared>();

  constructor(
    private readonly queues: NatsConnection,
    /** The subjects a filter listens on, bus-long included. */
    private readonly subjectsOf: (filter: string) => string[],
    private readonly receive: SharedReceiver,
    private readonly invoke: (handler: BusHandler, message: BusMessage) => void,
  ) {}

  share(queue: string, filter: string, handler: BusHandler): BusSubscription {
    const key = `${queue}\u0000${filter}`;
    let shared = this.shares.get(key);
    if (shared === undefined) {
      const target: Shared = { handlers: [], cursor: 0, subscriptions: [] };
      const name = `q_${createHash('sha256').update(key).digest('base64url').slice(0, 32)}`;
      for (const subject of this.subjectsOf(filter)) {
        target.subscriptions.push(
          this.queues.subscribe(subject, {
            queue: name,
            callback: (err, msg) => {
              if (err === null) this.deliver(filter, target, msg);
            },
          }),
        );
      }
      this.shares.set(key, (shared = target));
    }
    const owner = shared;
    const member: BusHandler = (message) => handler(message);
    owner.handlers.push(member);
    return {
      unsubscribe: () => {
        const at = owner.handlers.indexOf(member);
        if (at === -1) return;
        owner.handlers.splice(at, 1);
        if (owner.handlers.length > 0) return;
        for (const subscription of owner.subscriptions) subscription.unsubscribe();
        this.shares.delete(key);
      },
    };
  }

  /** Stops listening on NATS. */
  close(): void {
    for (const shared of this.shares.values()) {
      for (const subscription of shared.subscriptions) subscription.unsubscribe();
    }
    this.shares.clear();
  }

  private deliver(filter: string, shared: Shared, msg: Msg): void {
    const message = this.receive(filter, msg);
    if (message === null) return;
    const handler = shared.handlers[shared.cursor++ % shared.handlers.length];
    if (handler === undefined) return;
    this.invoke(handler, message);
  }
}
