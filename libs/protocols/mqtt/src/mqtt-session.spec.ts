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

  it('hands over a receipt whose acknowledgement the stream did not confirm, however many came after', () => {
    const session = new Session('c');
    session.received(7, 8, 70);
    session.unconfirmed(7);
    session.unconfirmed(99); // never received: nothing to keep
    for (let sequence = 100; sequence < 1_200; sequence++) session.received(sequence, sequence + 1, sequence);
    assert.equal(session.hasReceived(7, 8, 70), true);
    assert.deepEqual(session.unconfirmedSequences(), [7]);
    const handed = session.receivedSequences(64);
    assert.deepEqual(handed[0], [7, 70]);
    assert.equal(handed.length, 65);
    session.confirmed(7);
    assert.deepEqual(session.unconfirmedSequences(), []);
    assert.equal(
      session.receivedSequences(64).some(([sequence]) => sequence === 7),
      false,
    );
  });
});
