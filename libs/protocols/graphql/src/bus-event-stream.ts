import { type BusMessage, type BusSubscription, type TopicBus } from '#broker/bus';

/** One bus message as a GraphQL subscription sees it. */
export interface BusEvent {
  readonly message: BusMessage;
  readonly receivedAt: Date;
}

/**
 * A bus subscription as the async iterator graphql-js `subscribe` wants. The bus delivers
 * synchronously while the protocol sends asynchronously, so events wait in a queue; a queue that
 * reaches `maxPending` means the subscriber cannot keep up, and the stream fails instead of growing.
 */
export class BusEventStream implements AsyncGenerator<BusEvent, undefined, undefined> {
  private readonly queue: BusEvent[] = [];
  private readonly subscription: BusSubscription;
  private waiting: {
    resolve: (result: IteratorResult<BusEvent, undefined>) => void;
    reject: (err: Error) => void;
  } | null = null;
  private failure: Error | null = null;
  private done = false;

  /** Subscribes at once, so nothing published after the operation started is missed. Throws InvalidTopicError. */
  constructor(
    bus: TopicBus,
    filter: string,
    private readonly maxPending: number,
    /** Whether the subscriber may read a message on this topic; null: every message it matches. */
    reads: ((topic: string) => boolean) | null = null,
  ) {
    this.subscription = bus.subscribe(filter, (message) => {
      if (reads === null || reads(message.topic)) this.push({ message, receivedAt: new Date() });
    });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<BusEvent, undefined>> {
    const event = this.queue.shift();
    if (event !== undefined) return Promise.resolve({ value: event, done: false });
    if (this.failure !== null) {
      const failure = this.failure;
      this.failure = null;
      return Promise.reject(failure);
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<BusEvent, undefined>> {
    this.stop();
    this.queue.length = 0;
    this.failure = null;
    this.waiting?.resolve({ value: undefined, done: true });
    this.waiting = null;
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err: unknown): Promise<IteratorResult<BusEvent, undefined>> {
    void this.return();
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }

  private push(event: BusEvent): void {
    if (this.done) return;
    if (this.waiting !== null) {
      const waiting = this.waiting;
      this.waiting = null;
      return waiting.resolve({ value: event, done: false });
    }
    if (this.queue.length >= this.maxPending) {
      this.stop();
      // The waiting events are stale by now: the subscriber learns at once that it fell behind.
      this.queue.length = 0;
      this.failure = new Error(`more than ${this.maxPending} events waiting: the subscriber is too slow`);
      return;
    }
    this.queue.push(event);
  }

  private stop(): void {
    if (this.done) return;
    this.done = true;
    this.subscription.unsubscribe();
  }
}
