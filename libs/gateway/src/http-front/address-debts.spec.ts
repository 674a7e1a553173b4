import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AddressDebts } from './address-debts.js';
import { InputBudget, ManualClock } from '#broker/kit';

function budget(clock: ManualClock, initialDebt = 0) {
  const events: string[] = [];
  const reader = { pause: () => events.push('pause'), resume: () => events.push('resume') };
  const b = new InputBudget(
    { share: 0.25, burstMs: 100 },
    clock,
    reader,
    { throttled: () => undefined },
    initialDebt,
  );
  return { b, events };
}

describe('AddressDebts', () => {
  it('an open connection’s debt is owed by a new one from the same address, not by another address', () => {
    const clock = new ManualClock();
    const debts = new AddressDebts(clock);
    const first = budget(clock);
    debts.opened('203.0.113.5', first.b);
    first.b.charge(1000);
    assert.equal(debts.owed('203.0.113.5'), 1000);
    assert.equal(debts.owed('203.0.113.6'), 0);
    const second = budget(clock, debts.owed('203.0.113.5'));
    second.b.charge(1);
    assert.deepEqual(second.events, ['pause'], 'its first costly message pauses it at once');
  });

  it('what a closed connection still owed stays with the address, paid back at its share, then forgotten', () => {
    const clock = new ManualClock();
    const debts = new AddressDebts(clock);
    const { b } = budget(clock);
    debts.opened('203.0.113.5', b);
    b.charge(1000);
    debts.closed('203.0.113.5', b, 0.25);
    assert.equal(debts.owed('203.0.113.5'), 1000);
    clock.advance(2000);
    assert.equal(debts.owed('203.0.113.5'), 500);
    clock.advance(2000);
    assert.equal(debts.owed('203.0.113.5'), 0);
  });

  it('keeps at most 10,000 addresses’ left debts (the oldest goes)', () => {
    const clock = new ManualClock();
    const debts = new AddressDebts(clock);
    const ledger = (owed: number) => ({ owed: () => owed });
    debts.closed('a', ledger(500), 1);
    for (let i = 0; i < 10_000; i++) debts.closed(`x${i}`, ledger(10_000), 1);
    assert.equal(debts.owed('a'), 0, 'the oldest address was forgotten');
    assert.equal(debts.owed('x9999'), 10_000);
  });
});
