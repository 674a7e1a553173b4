import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ConsumerInfo } from '@nats-io/jetstream';
import { ConsumerCursor } from './consumer-cursor.js';

/** When the stream stored the messages these cases read (ms). */
const STORED = 1_796_000_000_000;

function info(delivered: number, ackFloor: number, created = '2026-11-30T10:00:00Z'): ConsumerInfo {
  return {
    created,
    delivered: { stream_seq: delivered, consumer_seq: delivered },
    ack_floor: { stream_seq: ackFloor, consumer_seq: ackFloor },
  } as ConsumerInfo;
}

describe('ConsumerCursor', () => {
  it('a sequence past every one delivered is new; a redelivery of one in flight is again', () => {
    const cursor = new ConsumerCursor();
    assert.equal(cursor.read(5, false, STORED), 'new');
    assert.equal(cursor.read(6, false, STORED), 'new');
    assert.equal(cursor.read(5, true, STORED), 'again');
  });

  it('a first delivery of a sequence delivered before (nats-server#5305) is again while in flight, done once acknowledged', () => {
    const cursor = new ConsumerCursor();
    cursor.read(7, false, STORED);
    cursor.read(8, false, STORED);
    assert.equal(cursor.read(8, false, STORED), 'again');
    cursor.acknowledged(7, STORED);
    assert.equal(cursor.read(7, false, STORED), 'done');
  });

  it('after NATS came back nothing is taken for acknowledged (a reused sequence is delivered), a repeat still gets DUP', () => {
    const cursor = new ConsumerCursor();
    cursor.opened(info(40, 35));
    cursor.acknowledged(38, STORED);
    cursor.restarted();
    assert.equal(cursor.read(35, false, STORED), 'again');
    assert.equal(cursor.read(38, false, STORED), 'again');
    assert.equal(cursor.read(41, false, STORED), 'new');
  });

  it('what another node acknowledged is known by the ack floor the consumer had when the feed opened here', () => {
    const cursor = new ConsumerCursor();
    cursor.opened(info(40, 35));
    assert.equal(cursor.read(35, false, STORED), 'done');
    assert.equal(cursor.read(38, false, STORED), 'again');
    assert.equal(cursor.read(38, true, STORED), 'again');
    assert.equal(cursor.read(41, false, STORED), 'new');
  });

  it('on a new node, what the session was given where it came from is a repeat, though the server forgot it (killed)', () => {
    const cursor = new ConsumerCursor();
    // The server's consumer lost its last deliveries: it says 555 delivered, the session had up to 557.
    cursor.opened(info(555, 555));
    cursor.deliveredUpTo(557);
    assert.equal(cursor.read(556, false, STORED), 'again');
    assert.equal(cursor.read(557, false, STORED), 'again');
    assert.equal(cursor.read(558, false, STORED), 'new');
  });

  it('a sequence acknowledged for one message and given to another, stored later (lost writes), is not done', () => {
    const cursor = new ConsumerCursor();
    cursor.read(68, false, STORED);
    cursor.acknowledged(68, STORED);
    assert.equal(cursor.read(68, false, STORED), 'done');
    assert.equal(cursor.read(68, false, STORED + 6000), 'again');
  });

  it('a consumer made again starts over from its own ack floor; the one it replaced, read late, is ignored', () => {
    const cursor = new ConsumerCursor();
    cursor.opened(info(67, 67, '2026-11-30T10:00:00Z'));
    assert.equal(cursor.read(40, false, STORED), 'done');
    cursor.opened(info(23, 23, '2026-11-30T10:05:00Z'));
    cursor.opened(info(67, 67, '2026-11-30T10:00:00Z'));
    assert.equal(cursor.read(23, false, STORED), 'done');
    assert.equal(cursor.read(40, false, STORED), 'again');
  });
});
