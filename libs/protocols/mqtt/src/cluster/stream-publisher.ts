import { createInbox, type Msg, type NatsConnection, type Subscription } from '@nats-io/nats-core';

/** How long a write waits for the stream's acknowledgement: the JetStream client's own default. */
const PUBACK_TIMEOUT_MS = 5000;
/** How often writes past their time are failed. */
const SWEEP_MS = 250;

interface Waiting {
  readonly resolve: (sequence: number) => void;
  readonly reject: (err: Error) => void;
  readonly sentAt: number;
}

/** A stream's acknowledgement of a write (a PubAck), or its refusal. */
interface PubAck {
  readonly stream?: string;
  readonly seq?: number;
  readonly error?: { readonly description?: string };
}

/** The stream refused a write (full, or its server out of room): the PubAck carried an error. */
export class StreamRefusal extends Error {}

/**
 * Writes to a JetStream stream, each answered by its PubAck on one reply subscription of this node's.
 * Written by hand because `js.publish` of nats.js costs per message what a QoS 1 store cannot afford:
 * a header block on the wire, a request object with its own timer, and an Error built (and dropped) as
 * each request ends, even one that succeeded; on the persistent-session benchmark that was a tenth of the
 * storing node's CPU. Here a write is a plain PUB with a reply subject, its promise settled by the PubAck
 * (or its refusal: a full stream, no JetStream), and writes past their time are failed by one timer.
 * At most `maxInFlight` writes wait at once; past that a write is refused at once, as a full stream
 * refuses it, so that a stalled server cannot make this node hold every publisher's message.
 */
export class StreamPublisher {
  private readonly waiting = new Map<number, Waiting>();
  private readonly prefix = `${createInbox()}.`;
  private subscription: Subscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private next = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly maxInFlight: number,
  ) {}

  start(): void {
    this.subscription = this.nc.subscribe(`${this.prefix}*`, {
      callback: (err, msg) => {
        if (err === null) this.answered(msg);
      },
    });
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.subscription?.unsubscribe();
    for (const waiting of this.waiting.values()) waiting.reject(new Error('the message stream was closed'));
    this.waiting.clear();
  }

  /** Resolves with the stream sequence the message was stored under. */
  publish(subject: string, data: Uint8Array): Promise<number> {
    if (this.waiting.size >= this.maxInFlight) {
      return Promise.reject(new Error('too many writes to the message stream under way'));
    }
    const id = ++this.next;
    return new Promise<number>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, sentAt: performance.now() });
      try {
        this.nc.publish(subject, data, { reply: this.prefix + id });
      } catch (err) {
        this.waiting.delete(id);
        reject(err as Error);
      }
    });
  }

  private answered(msg: Msg): void {
    const id = Number(msg.subject.slice(this.prefix.length));
    const waiting = this.waiting.get(id);
    if (waiting === undefined) return;
    this.waiting.delete(id);
    // An empty message with a status: nobody answers the stream's subject (no JetStream there).
    if (msg.data.length === 0) {
      waiting.reject(new Error(`the message stream did not answer (${msg.headers?.code ?? 'no status'})`));
      return;
    }
    let ack: PubAck;
    try {
      ack = msg.json<PubAck>();
    } catch {
      waiting.reject(new Error('the message stream answered with something that is not JSON'));
      return;
    }
    if (ack.error !== undefined) waiting.reject(new StreamRefusal(ack.error.description ?? 'refused'));
    else if (typeof ack.seq !== 'number' || !ack.stream) waiting.reject(new Error('invalid ack response'));
    else waiting.resolve(ack.seq);
  }

  /** Fails the writes past their time: the oldest are first in the map. */
  private sweep(): void {
    const before = performance.now() - PUBACK_TIMEOUT_MS;
    for (const [id, waiting] of this.waiting) {
      if (waiting.sentAt > before) return;
      this.waiting.delete(id);
      waiting.reject(new Error('the message stream did not acknowledge the write in time'));
    }
  }
}
