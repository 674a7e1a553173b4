import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Session } from './mqtt-session.js';

describe('Session: the QoS 2 stream messages its client received', () => {
  it('names a message by its sequence and when the stream stored it: a reused sequence is another message', () => {
    const session = new Session('c');
    session.received(68, 69, 1_000);
    assert.equal(session.hasReceived(68, 69, 1_000), true);
    assert.equal(session.hasReceived(68, 69, 7_000), false);
    assert.equal(session.hasReceived(67, 68, 1_000), false);
  });

  it('takes a sequence received where its stored time was not kept (an older record) for the message', () => {
    const session = new Session('c');
    session.received(68, 0);
    assert.equal(session.hasReceived(68, 69, 7_000), true);
  });

  it('hands over the newest, each with its stored time, not those known by packet id', () => {
    const session = new Session('c');
    session.received(undefined, 12);
    session.received(5, 6, 50);
    session.received(6, 7, 60);
    assert.deepEqual(session.receivedSequences(1), [[6, 60]]);
    assert.deepEqual(session.receivedSequences(10), [
      [5, 50],
      [6, 60],
    ]);
  });
});
