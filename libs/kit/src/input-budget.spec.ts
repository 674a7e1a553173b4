import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InputBudget } from './input-budget.js';
import { ManualClock } from './manual-clock.js';

function budget(share = 0.25, burstMs = 100) {
  const clock = new ManualClock();
  const events: string[] = [];
  const reader = { pause: () => events.push('pause'), resume: () => events.push('resume') };
  const waits: number[] = [];
  const b = new InputBudget({ share, burstMs }, clock, reader, { throttled: (ms) => waits.push(ms) });
  return { b, clock, events, waits };
}

describe('InputBudget', () => {
  it('work within the share never pauses the reads', () => {
    const { b, clock, events } = budget(0.25, 100);
    // 2 ms of work every 10 ms is a fifth of a core: under a quarter, for a minute.
    for (let i = 0; i < 6000; i++) {
      b.charge(2);
      clock.advance(10);
    }
    assert.deepEqual(events, []);
  });

  it('a burst up to burstMs passes; past it the reads pause until the debt is paid at the share', () => {
    const { b, clock, events, waits } = budget(0.25, 100);
    b.charge(60);
    b.charge(40);
    assert.deepEqual(events, [], 'exactly the burst is allowed');
    b.charge(20);
    assert.deepEqual(events, ['pause']);
    assert.deepEqual(waits, [120 / 0.25]);
    clock.advance(479);
    assert.deepEqual(events, ['pause']);
    clock.advance(1);
    assert.deepEqual(events, ['pause', 'resume']);
    // Paid back: a full burst is allowed again.
    b.charge(100);
    assert.deepEqual(events, ['pause', 'resume']);
  });

  it('work charged while paused (messages already read) does not pause twice', () => {
    const { b, clock, events, waits } = budget(0.5, 10);
    b.charge(20);
    b.charge(20);
    assert.deepEqual(events, ['pause']);
    assert.equal(waits.length, 1);
    clock.advance(40);
    assert.deepEqual(events, ['pause', 'resume']);
    // The 20 ms charged while paused is still owed after that wait: the next message pauses again.
    b.charge(20);
    assert.deepEqual(events, ['pause', 'resume', 'pause']);
  });

  it('a connection using more than its share is held to it over time', () => {
    const { b, clock, events } = budget(0.25, 100);
    // A client that would keep the loop busy: 5 ms messages as fast as its reads are resumed.
    let worked = 0;
    const end = clock.now() + 60_000;
    while (clock.now() < end) {
      if (events.at(-1) === 'pause') {
        clock.advance(1);
        continue;
      }
      b.charge(5);
      worked += 5;
      clock.advance(5);
    }
    const share = worked / 60_000;
    assert.ok(share > 0.2 && share < 0.3, `held to about a quarter: ${share}`);
  });

  it('stop drops a pending resume', () => {
    const { b, clock, events } = budget(0.25, 10);
    b.charge(50);
    b.stop();
    clock.advance(10_000);
    assert.deepEqual(events, ['pause']);
    assert.equal(clock.pending, 0);
  });
});
