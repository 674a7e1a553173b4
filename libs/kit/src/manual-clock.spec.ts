import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from './manual-clock.js';

describe('ManualClock', () => {
  it('runs due timers in time order, at their time, and skips cancelled ones', () => {
    const clock = new ManualClock(0);
    const ran: string[] = [];
    clock.after(30, () => ran.push(`c@${clock.now()}`));
    clock.after(10, (name: string) => ran.push(`${name}@${clock.now()}`), 'a');
    const cancelled = clock.after(20, () => ran.push('never'));
    clock.cancel(cancelled);
    clock.advance(25);
    assert.deepEqual(ran, ['a@10']);
    assert.equal(clock.now(), 25);
    clock.advance(10);
    assert.deepEqual(ran, ['a@10', 'c@30']);
    assert.equal(clock.pending, 0);
  });

  it('refresh pushes a timer back to its full delay from now; a timer started by a timer runs in the same advance', () => {
    const clock = new ManualClock(0);
    const ran: number[] = [];
    const timer = clock.after(10, () => ran.push(clock.now()));
    clock.advance(8);
    timer.refresh();
    clock.advance(8);
    assert.equal(ran.length, 0);
    clock.after(1, () => clock.after(1, () => ran.push(clock.now())));
    clock.advance(4);
    assert.deepEqual(ran, [18, 18]);
  });

  it('a timer refreshed from its own run fires again, as in Node; a cancelled one is not armed by a refresh', () => {
    const clock = new ManualClock(0);
    let ticks = 0;
    const every = clock.after(100, () => {
      ticks++;
      every.refresh();
    });
    clock.advance(350);
    assert.equal(ticks, 3);
    clock.cancel(every);
    every.refresh();
    clock.advance(1000);
    assert.equal(ticks, 3);
    assert.equal(clock.pending, 0);
    assert.equal(clock.monotonic(), clock.now());
  });
});
