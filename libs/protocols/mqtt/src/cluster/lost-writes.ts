import { randomBytes } from 'node:crypto';
import {
  AckPolicy,
  type ConsumerInfo,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type StreamState,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/nats-core';
import { type Logger } from 'pino';

/** How long the server keeps this node's holding consumer if the node dies before deleting it. */
const KEEPER_INACTIVE_MS = 60_000;

/** How long the stream is read for the first message stored since NATS went away. */
const FIRST_SINCE_MS = 5000;
/** Messages read at a time while looking for it (headers only). */
const SCAN_BATCH = 512;
/** Tries at making a consumer again while a reader makes it first. */
const MAKE_AGAIN_TRIES = 3;

/**
 * A nats-server killed before its stream writes reached the disk can come back without messages it had
 * acknowledged while its consumers remember delivering them (nats-io/nats-server#5412, #3996, #6124;
 * nats-server 2.9 after any restart): the next messages stored take those sequences again, and each such
 * consumer passes them over as delivered. This node knows the highest sequence it saw stored (its own
 * publishes' acknowledgements, its deliveries); when NATS comes back, a stream that held less than that
 * when it came back lost writes, and every consumer whose deliveries went past its end is made again
 * from its ack floor (or that end, if lower), as JetStream before 2.14 (ADR-60) cannot move a consumer
 * back. Its readers find it gone and read it again.
 *
 * The stream keeps a message only while a consumer needs it (interest retention): while consumers are
 * made again, one of this node's own reads the whole stream unread and unacknowledged, so that nothing
 * is let go meanwhile. A message stored at a reused sequence and acknowledged by every other consumer
 * before that is let go (and lost to the consumers past it): this narrows the loss, `sync_interval:
 * always` prevents it.
 */
export class LostWrites {
  /** The highest stream sequence this node saw stored. */
  private knownUpTo = 0;
  /** When this node lost NATS, until the stream was checked after it came back. */
  private lostAt: Date | null = null;
  /** `knownUpTo` when this node lost NATS. */
  private knownAtLoss = 0;

  constructor(
    private readonly stream: string,
    private readonly log: Logger,
  ) {}

  /** The stream holds `sequence` (this node's publish was acknowledged with it, or it was delivered here). */
  known(sequence: number): void {
    if (sequence > this.knownUpTo) this.knownUpTo = sequence;
  }

  /** NATS went away. */
  lost(): void {
    if (this.lostAt !== null) return;
    this.lostAt = new Date();
    this.knownAtLoss = this.knownUpTo;
  }

  /**
   * NATS is back and the stream is `state`: if it held less than this node saw stored, `forget` is told
   * where it ended (nothing past it was delivered or received) and the consumers past it are made again.
   */
  async check(
    jsm: JetStreamManager,
    js: JetStreamClient,
    state: StreamState,
    forget: (held: number) => void,
  ): Promise<void> {
    const lostAt = this.lostAt;
    if (lostAt === null) return;
    const storedSince = Date.parse(state.last_ts) >= lostAt.getTime();
    if (storedSince || this.knownAtLoss > state.last_seq) {
      const keeper = await this.keepEverything(jsm);
      try {
        const held = storedSince ? await this.lastBefore(js, lostAt, state.last_seq) : state.last_seq;
        if (this.knownAtLoss > held) {
          this.log.error(
            { streamEnd: held, known: this.knownAtLoss },
            'mqtt: nats-server came back with its stream ending before sequences this node saw stored ' +
              '(a kill without jetstream sync_interval: always loses writes); consumers past the end are ' +
              'made again',
          );
          forget(held);
          await this.windBack(jsm, held);
          this.knownUpTo = held;
        }
      } finally {
        await jsm.consumers.delete(this.stream, keeper).catch(() => false);
      }
    }
    this.lostAt = null;
  }

  /** A consumer of this node's that needs every message in the stream: none is let go while it is there. */
  private async keepEverything(jsm: JetStreamManager): Promise<string> {
    const name = `kept_${randomBytes(6).toString('hex')}`;
    await jsm.consumers.add(this.stream, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      inactive_threshold: nanos(KEEPER_INACTIVE_MS),
    });
    return name;
  }

  /**
   * The last sequence the stream held when NATS came back: the one before the first message stored since
   * this node lost NATS (by the server's clock against this node's), or `end` if none is there now.
   * The reader starts at that time, but not always at that message: nats-server 2.10 looks the time up
   * in the first block whose last write is newer, and when every message of that block stored since
   * then is gone (acknowledged by all: interest retention) it starts at the stream's first message, so
   * the older messages it gives are read past. Taking the first of them for the answer had each node
   * back from a pause find its stream "short" by the messages its clients had not acknowledged yet, and
   * make every consumer past them again for nothing.
   */
  private async lastBefore(js: JetStreamClient, lostAt: Date, end: number): Promise<number> {
    const since = BigInt(lostAt.getTime()) * 1_000_000n;
    const reader = await js.consumers.get(this.stream, {
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: lostAt.toISOString(),
      headers_only: true,
    });
    try {
      const deadline = performance.now() + FIRST_SINCE_MS;
      while (performance.now() < deadline) {
        const batch = await reader.fetch({ max_messages: SCAN_BATCH, expires: FIRST_SINCE_MS });
        let read = 0;
        for await (const message of batch) {
          read++;
          if (message.info.timestampNanos >= since) return message.seq - 1;
          if (message.info.pending === 0) return end;
        }
        if (read === 0) return end;
      }
      this.log.warn({ end }, 'mqtt: the stream was not read to its end after NATS came back; taken as whole');
      return end;
    } finally {
      await reader.delete().catch(() => false);
    }
  }

  /**
   * Every consumer whose deliveries went past `held` made again from its ack floor, or `held` if lower.
   * Every node that saw a lost sequence does this for every consumer, so that those nobody reads now are
   * wound back too; one another node made again meanwhile (a later creation time) is left alone. One
   * that cannot be made again is logged and the others still are.
   */
  private async windBack(jsm: JetStreamManager, held: number): Promise<void> {
    const listed: ConsumerInfo[] = [];
    for await (const info of jsm.consumers.list(this.stream)) listed.push(info);
    for (const info of listed) {
      if (info.delivered.stream_seq <= held || info.name.startsWith('kept_')) continue;
      const start = Math.min(info.ack_floor.stream_seq, held) + 1;
      await this.makeAgain(jsm, info, start).catch((err: unknown) =>
        this.log.error(
          { consumer: info.name, start, err: (err as Error).message },
          'mqtt: a consumer past the stream end was not made again: its messages from there may be skipped',
        ),
      );
    }
  }

  /**
   * `info`'s consumer made again from `start`. Its reader, finding it deleted, makes it again too, from
   * the stream's end (as it makes a consumer an operator deleted): if that lands between the deletion
   * and this, it is deleted again, or the messages from `start` would be passed over (and, the keeper
   * gone, let go). One another node's wind-back made (from a sequence) is taken.
   */
  private async makeAgain(jsm: JetStreamManager, info: ConsumerInfo, start: number): Promise<void> {
    const current = await jsm.consumers.info(this.stream, info.name).catch(() => null);
    if (current?.created !== info.created) return;
    for (let tries = 1; ; tries++) {
      await jsm.consumers.delete(this.stream, info.name).catch(() => false);
      try {
        await jsm.consumers.add(this.stream, {
          ...info.config,
          deliver_policy: DeliverPolicy.StartSequence,
          opt_start_seq: start,
        });
        return;
      } catch (err) {
        const made = await jsm.consumers.info(this.stream, info.name).catch(() => null);
        if (made?.config.deliver_policy === DeliverPolicy.StartSequence) return;
        if (tries === MAKE_AGAIN_TRIES) throw err;
      }
    }
  }
}
