import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HandshakeRate } from './handshake-rate.js';
import { ManualClock } from '#broker/kit';

describe('HandshakeRate', () => {
  it('lets a burst through, then one handshake per 1/perSecond, and says how long to wait', () => {
    const clock = new ManualClock();
    const rate = new HandshakeRate({ perSecond: 2, burst: 3 }, clock);
    assert.deepEqual(
      [1, 2, 3].map(() => rate.take('10.0.0.1')),
      [0, 0, 0],
    );
    assert.equal(rate.take('10.0.0.1'), 1, 'the fourth at once waits');
    clock.advance(499);
    assert.equal(rate.take('10.0.0.1'), 1);
    clock.advance(1);
    assert.equal(rate.take('10.0.0.1'), 0, 'half a second later, one more');
    assert.equal(rate.take('10.0.0.1'), 1);
  });

  it('counts each address on its own', () => {
    const rate = new HandshakeRate({ perSecond: 1, burst: 1 }, new ManualClock());
    assert.equal(rate.take('10.0.0.1'), 0);
    assert.equal(rate.take('10.0.0.2'), 0);
    assert.equal(rate.take('10.0.0.1'), 1);
  });

  it('a slow rate asks for more than a second', () => {
    const rate = new HandshakeRate({ perSecond: 0.2, burst: 1 }, new ManualClock());
    assert.equal(rate.take('10.0.0.1'), 0);
    assert.equal(rate.take('10.0.0.1'), 5);
  });

  it('perSecond 0 is no limit', () => {
    const rate = new HandshakeRate({ perSecond: 0, burst: 1 }, new ManualClock());
    for (let i = 0; i < 1000; i++) assert.equal(rate.take('10.0.0.1'), 0);
  });

  it('forgets addresses whose bucket filled up again, and keeps the active ones', () => {
    const clock = new ManualClock();
    const rate = new HandshakeRate({ perSecond: 10, burst: 2 }, clock);
    for (let i = 0; i < 1023; i++) rate.take(`10.0.${i >> 8}.${i & 255}`);
    clock.advance(1000);
    rate.take('10.9.9.9');
    rate.take('10.9.9.9');
    assert.equal(rate.size, 1024);
    // The next new address sweeps: the 1023 idle ones have filled up and go; 10.9.9.9 is in debt.
    rate.take('10.8.8.8');
    assert.equal(rate.size, 2);
    assert.equal(rate.take('10.9.9.9'), 1, 'an address in debt keeps its wait');
  });

  it('an address refused more than its burst is overdrawn until the rate pays its debt back', () => {
    const clock = new ManualClock();
    const rate = new HandshakeRate({ perSecond: 10, burst: 2 }, clock);
    rate.take('10.0.0.1');
    rate.take('10.0.0.1');
    for (let i = 0; i < 3; i++) assert.ok(rate.take('10.0.0.1') > 0);
    assert.equal(rate.overdrawn('10.0.0.1'), true);
    assert.equal(rate.overdrawn('10.0.0.2'), false);
    // Three refusals owed, paid at ten a second: 0.1 s later it owes two, its burst, no more.
    clock.advance(100);
    assert.equal(rate.overdrawn('10.0.0.1'), false);
  });
});
