import { type ConsumerInfo } from '@nats-io/jetstream';
import { type NatsConnection } from '@nats-io/nats-core';

/**
 * The widest span of stream sequences searched for a consumer's unacknowledged messages; past it they
 * come back after the consumer's ack wait, as JetStream redelivers them on its own.
 */
const MAX_SPAN = 50_000;

/** How long the server may take to confirm the last negative acknowledgement. */
const CONFIRM_MS = 2000;

/**
 * Sends back at once what a consumer's last reader took and never acknowledged: a node that died (or
 * was cut off and let its session go) holds deliveries that JetStream would redeliver only after the
 * ack wait, and until then they fill the consumer's `max_ack_pending`, so nothing else reaches the
 * session's new node either. Call it before reading the consumer.
 *
 * JetStream has no request for this before 2.14 (`CONSUMER.RESET`), and the NATS client can negatively
 * acknowledge only a message it holds. Written by hand: each sequence between the ack floor and the
 * last delivered is negatively acknowledged on its v1 acknowledgement subject (`$JS.ACK.<stream>.
 * <consumer>.<delivered count>.<stream seq>.<consumer seq>.<timestamp>.<pending>`), which every server
 * since 2.2 takes. The server reads the stream sequence, checks the consumer sequence against its ack
 * floor, and ignores a sequence that is not pending (acknowledged out of order, or another subject's)
 * as long as one is pending. So none may be acknowledged meanwhile: the last one asks for the server's
 * confirmation, which comes once the server has processed all of them (it takes them in order), and the
 * consumer is read only after it. Resolves with how many sequences were named (0 if none was pending).
 */
export async function returnPending(nc: NatsConnection, info: ConsumerInfo): Promise<number> {
  const from = info.ack_floor.stream_seq + 1;
  const to = info.delivered.stream_seq;
  if (info.num_ack_pending === 0 || to < from || to - from + 1 > MAX_SPAN) return 0;
  const subject = (seq: number) =>
    `$JS.ACK.${info.stream_name}.${info.name}.1.${seq}.${info.delivered.consumer_seq}.0.0`;
  for (let seq = from; seq < to; seq++) nc.publish(subject(seq), '-NAK');
  await nc.request(subject(to), '-NAK', { timeout: CONFIRM_MS });
  return to - from + 1;
}
