/**
 * How a node tells a stream that lost writes from one that did not, on a real nats-server: the node
 * remembers the highest sequence it saw stored, and when NATS is back it looks for the stream's end
 * before the first message stored since it lost NATS (`LostWrites`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AckPolicy,
  jetstream,
  type JetStreamClient,
  jetstreamManager,
  type JetStreamManager,
  RetentionPolicy,
} from '@nats-io/jetstream';
import { type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import pino from 'pino';
import { LostWrites } from '../libs/protocols/mqtt/src/cluster/lost-writes.js';
import { natsServerVersion, TestNats } from './support/cluster.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An interest stream with one consumer per name, each on `<stream>.<name>`. */
async function interestStream(jsm: JetStreamManager, stream: string, consumers: string[]): Promise<void> {
  await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], retention: RetentionPolicy.Interest });
  for (const name of consumers)
    await jsm.consumers.add(stream, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      filter_subject: `${stream}.${name}`,
    });
}

/** Reads `count` messages of a consumer and acknowledges each (the stream lets them go). */
async function readAndAck(js: JetStreamClient, stream: string, name: string, count: number): Promise<void> {
  const consumer = await js.consumers.get(stream, name);
  for (let i = 0; i < count; i++) {
    const message = await consumer.next({ expires: 2000 });
    assert.ok(message, `${name} reads message ${i + 1} of ${count}`);
    await message.ackAck();
  }
}

describe('lost writes: the stream end a node finds when NATS is back', () => {
  let nats: TestNats;
  let nc: NatsConnection;

  before(async () => {
    nats = await TestNats.start();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  after(async () => {
    await nc?.close();
    await nats?.stop();
  });

  it('a stream whose messages since the loss were all acknowledged is not taken for short', async () => {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    await interestStream(jsm, 'whole', ['away', 'here']);
    const made = (await jsm.consumers.info('whole', 'away')).created;
    // The stream's first message waits for a client that is away; the next was this node's.
    await js.publish('whole.away', 'waiting');
    const lostWrites = new LostWrites('whole', pino({ level: 'silent' }));
    lostWrites.known((await js.publish('whole.here', 'before')).seq);
    await readAndAck(js, 'whole', 'here', 1);
    lostWrites.lost();
    await sleep(20);
    // Stored since, and acknowledged at once: gone from the stream, which now holds only the first.
    for (let i = 0; i < 3; i++) await js.publish('whole.here', `since ${i}`);
    await readAndAck(js, 'whole', 'here', 3);
    const { state } = await jsm.streams.info('whole');
    assert.equal(state.messages, 1);

    const forgotten: number[] = [];
    await lostWrites.check(jsm, js, state, (held) => forgotten.push(held));
    assert.deepEqual(forgotten, [], 'the stream kept every write: nothing is forgotten');
    const away = await jsm.consumers.info('whole', 'away');
    assert.equal(away.created, made, 'the waiting consumer was not made again');
    assert.equal(away.num_pending, 1);
  });

  const [major, minor] = natsServerVersion();
  const skip =
    major === 2 && minor < 10 ? `nats-server ${major}.${minor} does not come back past its consumers` : false;

  it(
    'a stream that came back without writes it acknowledged is found, and its consumer wound back',
    { skip },
    async () => {
      const jsm = await jetstreamManager(nc);
      const js = jetstream(nc);
      await interestStream(jsm, 'short', ['here']);
      const lostWrites = new LostWrites('short', pino({ level: 'silent' }));
      const kept = (await js.publish('short.here', 'kept')).seq;
      lostWrites.known(kept);
      await nats.rollBackStream('short', async () => {
        // Written and delivered while the server was up, then gone from its stream.
        for (let i = 0; i < 2; i++) lostWrites.known((await js.publish('short.here', `forgotten ${i}`)).seq);
        await readAndAck(js, 'short', 'here', 3);
        lostWrites.lost();
      });
      let reused = 0;
      while (reused === 0) {
        reused = await js.publish('short.here', 'after').then(
          (ack) => ack.seq,
          () => sleep(100).then(() => 0),
        );
      }
      assert.equal(reused, kept + 1, 'the server gives a sequence it acknowledged before to a new message');

      const forgotten: number[] = [];
      const { state } = await jsm.streams.info('short');
      await lostWrites.check(jsm, js, state, (held) => forgotten.push(held));
      assert.deepEqual(forgotten, [kept], 'the stream is known to end where it came back');
      const here = await jsm.consumers.info('short', 'here');
      assert.equal(here.num_pending, 1, 'the consumer reads the message under the reused sequence');
    },
  );
});
