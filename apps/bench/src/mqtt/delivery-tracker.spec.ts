import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryTracker } from './delivery-tracker.js';

describe('DeliveryTracker', () => {
  it('completes a message once every subscriber has it', () => {
    const tracker = new DeliveryTracker(1, 2);
    const seq = tracker.published(0);
    assert.equal(tracker.delivered(0, 0, seq).completed, false);
    assert.deepEqual(tracker.delivered(1, 0, seq), {
      fresh: true,
      completed: true,
      error: null,
      errorCount: 0,
    });
    assert.equal(tracker.outstanding(), 0);
  });

  it('counts what has not arrived as outstanding, per subscriber', () => {
    const tracker = new DeliveryTracker(2, 3);
    for (let i = 0; i < 4; i++) tracker.published(0);
    tracker.published(1);
    tracker.delivered(0, 0, 0);
    assert.equal(tracker.outstanding(), 3 * 5 - 1);
  });

  it('reports a repeat, a gap, an unknown publisher and a message never sent', () => {
    const tracker = new DeliveryTracker(1, 1);
    for (let i = 0; i < 5; i++) tracker.published(0);
    tracker.delivered(0, 0, 0);
    assert.deepEqual(tracker.delivered(0, 0, 0), {
      fresh: false,
      completed: false,
      error: 'duplicate or out of order',
      errorCount: 1,
    });
    assert.deepEqual(tracker.delivered(0, 0, 3), {
      fresh: true,
      completed: true,
      error: 'gap: messages skipped',
      errorCount: 2,
    });
    assert.equal(tracker.delivered(0, 0, 1).error, 'duplicate or out of order');
    assert.equal(tracker.delivered(0, 7, 0).error, 'message from an unknown publisher');
    assert.equal(tracker.delivered(0, 0, 5).error, 'message never sent');
  });

  it('compares PUBACKs with what was sent', () => {
    const tracker = new DeliveryTracker(2, 1);
    tracker.published(0);
    tracker.published(0);
    tracker.published(1);
    assert.equal(tracker.pubacksMissing(Uint32Array.of(2, 0)), 1);
    assert.equal(tracker.pubacksMissing(Uint32Array.of(2, 2)), -1);
  });
});
