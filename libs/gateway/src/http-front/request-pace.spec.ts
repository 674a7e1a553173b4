import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '#broker/kit';
import { RequestPace } from './request-pace.js';

describe('RequestPace', () => {
  it('off: no request ever waits', () => {
    const pace = new RequestPace(false, new ManualClock());
    for (let i = 0; i < 100; i++) pace.charge('10.0.0.1', 50);
    assert.equal(pace.wait('10.0.0.1'), 0);
  });

  it('an address past its burst waits until its debt is back under it, at its share; others do not', () => {
    const clock = new ManualClock();
    const pace = new RequestPace({ share: 0.25, burstMs: 10 }, clock);
    for (let i = 0; i < 4; i++) pace.charge('10.0.0.1', 5);
    // 20 ms owed, 10 past the burst: paid back at a quarter of a millisecond per millisecond.
    assert.equal(pace.wait('10.0.0.1'), 40);
    assert.equal(pace.wait('10.0.0.2'), 0);
    clock.advance(40);
    assert.equal(pace.wait('10.0.0.1'), 0);
  });

  it('charges one request at most 50 ms: time waiting on the store is not all work', () => {
    const pace = new RequestPace({ share: 0.5, burstMs: 10 }, new ManualClock());
    pace.charge('10.0.0.1', 5000);
    assert.equal(pace.wait('10.0.0.1'), 80);
  });
});
