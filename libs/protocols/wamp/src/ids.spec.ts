import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { freshId, isId, MAX_ID, randomId, SequentialIds } from './ids.js';

describe('WAMP ids', () => {
  it('accepts integers in [1, 2^53] only', () => {
    for (const ok of [1, 2, 12345, MAX_ID - 1, MAX_ID]) assert.equal(isId(ok), true, String(ok));
    for (const bad of [0, -1, 1.5, MAX_ID + 2, Number.NaN, Infinity, '1', null, undefined, [1]]) {
      assert.equal(isId(bad), false, String(bad));
    }
  });

  it('random ids are valid and spread over the range', () => {
    const seen = new Set<number>();
    let high = 0;
    let odd = 0;
    let middle = 0;
    for (let i = 0; i < 1000; i++) {
      const id = randomId();
      assert.equal(isId(id), true);
      seen.add(id);
      if (id > 2 ** 52) high++;
      if (id % 2 === 1) odd++;
      if (Math.floor(id / 2 ** 27) % 2 === 1) middle++;
    }
    assert.equal(seen.size, 1000);
    assert.ok(high > 300 && high < 700, `about half above 2^52, got ${high}`);
    assert.ok(odd > 300 && odd < 700, `about half odd, got ${odd}`);
    assert.ok(middle > 300 && middle < 700, `bit 27 set in about half, got ${middle}`);
  });

  it('sequential ids start at 1 and wrap after 2^53', () => {
    const ids = new SequentialIds();
    assert.deepEqual([ids.next(), ids.next(), ids.next()], [1, 2, 3]);
    const nearEnd = new SequentialIds(MAX_ID - 1);
    assert.deepEqual([nearEnd.next(), nearEnd.next()], [MAX_ID, 1]);
  });

  it('fresh ids avoid taken ones', () => {
    const taken = new Set<number>();
    for (let i = 0; i < 100; i++) taken.add(freshId(taken));
    assert.equal(taken.size, 100);
  });
});
