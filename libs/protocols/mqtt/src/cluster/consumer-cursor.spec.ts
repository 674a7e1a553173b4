import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ConsumerInfo } from '@nats-io/jetstream';
import { ConsumerCursor } from './consumer-cursor.js';

function info(delivered: number, ackFloor: number): ConsumerInfo {
  return {
    delivered: { stream_seq: delivered, consumer_seq: delivered },
    ack_floor: { stream_seq: ackFloor, consumer_seq: ackFloor },
  } as ConsumerInfo;
}

describe('ConsumerCursor', () => {
  it('a sequence past every one delivered is new; a redelivery of one in flight is again', () => {
    const cursor = new ConsumerCursor();
    assert.equal(cursor.read(5, false), 'new');
    assert.equal(cursor.read(6, false), 'new');
    assert.equal(cursor.read(5, true), 'again');
  });

  it('a first delivery of a sequence delivered before (nats-server#5305) is again while in flight, done once acknowledged', () => {
    const cursor = new ConsumerCursor();
    cursor.read(7, false);
    cursor.read(8, false);
    assert.equal(cursor.read(8, false), 'again');
    cursor.acknowledged(7);
    assert.equal(cursor.read(7, false), 'done');
  });

  it('after NATS came back nothing is taken for acknowledged (a reused sequence is delivered), a repeat still gets DUP', () => {
    const cursor = new ConsumerCursor();
    cursor.opened(info(40, 35));
    cursor.acknowledged(38);
    cursor.restarted();
    assert.equal(cursor.read(35, false), 'again');
    assert.equal(cursor.read(38, false), 'again');
    assert.equal(cursor.read(41, false), 'new');
  });

  it('what another node acknowledged is known by the ack floor the consumer had when the feed opened here', () => {
    const cursor = new ConsumerCursor();
    cursor.opened(info(40, 35));
    assert.equal(cursor.read(35, false), 'done');
    assert.equal(cursor.read(38, false), 'again');
    assert.equal(cursor.read(38, true), 'again');
    assert.equal(cursor.read(41, false), 'new');
  });

  it('on a new node, what the session was given where it came from is a repeat, though the server forgot it (killed)', () => {
    const cursor = new ConsumerCursor();
    // The server's consumer lost its last deliveries: it says 555 delivered, the session had up to 557.
    cursor.opened(info(555, 555));
    cursor.deliveredUpTo(557);
    assert.equal(cursor.read(556, false), 'again');
    assert.equal(cursor.read(557, false), 'again');
    assert.equal(cursor.read(558, false), 'new');
  });
});
