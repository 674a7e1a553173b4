import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '#broker/kit';
import { RATE_WINDOW_MS, TopicRates } from './topic-rates.js';

function record(rates: TopicRates, topic: string, times: number): void {
  for (let i = 0; i < times; i++) rates.record(topic);
}

function counts(rates: TopicRates): [string, number, number][] {
  return rates.busiest().map((r) => [r.topic, r.messages, r.overcount]);
}

describe('TopicRates', () => {
  it('lists the busiest topics first, ties by topic, with rates over the time counted', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock);
    record(rates, 'a/1', 3);
    record(rates, 'b/2', 10);
    record(rates, 'c/3', 3);
    clock.advance(5_000);
    assert.deepEqual(counts(rates), [
      ['b/2', 10, 0],
      ['a/1', 3, 0],
      ['c/3', 3, 0],
    ]);
    const [busiest] = rates.busiest(1);
    assert.equal(busiest?.spanMs, 5_000);
    assert.equal(busiest?.perSecond, 2);
    assert.equal(rates.busiest(2).length, 2);
  });

  it('takes a rate over one second at least, so a counter just started shows no flood', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock);
    record(rates, 't', 4);
    clock.advance(10);
    assert.equal(rates.busiest()[0]?.perSecond, 4);
  });

  it('counts at most its capacity of topics: a new one takes the least busy one’s place and its count', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock, 3);
    record(rates, 'x', 5);
    record(rates, 'y', 2);
    record(rates, 'z', 4);
    record(rates, 'new', 1);
    // 'y' (2) went; 'new' inherits its 2 as an overcount: at most 3, at least 1.
    assert.deepEqual(counts(rates), [
      ['x', 5, 0],
      ['z', 4, 0],
      ['new', 3, 2],
    ]);
    // A topic busier than the ones evicted gets in ('new', the least busy, goes) and stays.
    record(rates, 'hot', 1);
    record(rates, 'hot', 9);
    assert.deepEqual(counts(rates), [
      ['hot', 13, 3],
      ['x', 5, 0],
      ['z', 4, 0],
    ]);
  });

  it('replaces topic after topic by the least busy, one that grew since the last scan not among them', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock, 3);
    record(rates, 'a', 1);
    record(rates, 'b', 1);
    record(rates, 'c', 1);
    record(rates, 'd', 1);
    // 'a' went (the first of the three least busy); 'b' grows before the next newcomer.
    record(rates, 'b', 1);
    record(rates, 'e', 1);
    // 'c' went, not 'b' (2 now) nor 'd' (2).
    assert.deepEqual(counts(rates), [
      ['b', 2, 0],
      ['d', 2, 1],
      ['e', 2, 1],
    ]);
    // All three at 2: the next newcomers take their places in turn, never one that just came in.
    record(rates, 'f', 1);
    record(rates, 'g', 1);
    assert.deepEqual(counts(rates), [
      ['f', 3, 2],
      ['g', 3, 2],
      ['e', 2, 1],
    ]);
  });

  it('keeps the last full window and the current one, and forgets a topic quiet for a whole window', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock);
    record(rates, 'steady', 6);
    record(rates, 'once', 2);
    clock.advance(RATE_WINDOW_MS);
    record(rates, 'steady', 3);
    assert.deepEqual(counts(rates), [
      ['steady', 9, 0],
      ['once', 2, 0],
    ]);
    const [steady] = rates.busiest();
    assert.equal(steady?.spanMs, RATE_WINDOW_MS);
    clock.advance(RATE_WINDOW_MS / 2);
    assert.equal(rates.busiest()[0]?.spanMs, RATE_WINDOW_MS * 1.5);
    clock.advance(RATE_WINDOW_MS / 2);
    // The first window is gone: 'steady' counts its 3 of the last one, 'once' is forgotten.
    assert.deepEqual(counts(rates), [['steady', 3, 0]]);
    assert.equal(rates.busiest()[0]?.spanMs, RATE_WINDOW_MS);
  });

  it('forgets everything after two quiet windows', () => {
    const clock = new ManualClock();
    const rates = new TopicRates(clock);
    record(rates, 'gone', 7);
    clock.advance(2 * RATE_WINDOW_MS + 1);
    assert.deepEqual(counts(rates), []);
    record(rates, 'back', 1);
    assert.deepEqual(counts(rates), [['back', 1, 0]]);
  });
});
