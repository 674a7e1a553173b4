import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId, timestamp } from './ids.js';

describe('newId', () => {
  it('is fixed-width, lists in creation order, and never repeats across refills of its random pool', () => {
    const at = new Date('2026-01-01T00:00:00.000Z');
    const ids = Array.from({ length: 5000 }, () => newId(at));
    assert.equal(
      parseInt(ids[0]?.slice(0, 9) ?? '', 36),
      at.getTime(),
      'the first nine characters are the ms',
    );
    assert.ok(ids.every((id) => /^[0-9a-z]{13}[0-9a-f]{12}$/.test(id)));
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, ids.length);
    const suffixes = new Set(ids.map((id) => id.slice(13)));
    assert.equal(suffixes.size, ids.length, 'each id draws fresh random bytes');
  });

  it('a later time sorts after an earlier one', () => {
    const early = newId(new Date('2027-01-01T00:00:00.000Z'));
    const late = newId(new Date('2027-01-01T00:00:00.001Z'));
    assert.ok(early < late);
    assert.equal(parseInt(late.slice(0, 9), 36), Date.parse('2027-01-01T00:00:00.001Z'));
    assert.equal(late.slice(9, 13), '0000', 'a new millisecond starts its sequence again');
  });
});

describe('timestamp', () => {
  it("is the current time's ISO text, new each millisecond", async () => {
    const before = Date.now();
    const first = timestamp();
    const after = Date.now();
    const ms = Date.parse(first);
    assert.ok(ms >= before && ms <= after, `${first} is now`);
    assert.match(first, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await new Promise((resolve) => setTimeout(resolve, 5));
    assert.ok(timestamp() > first, 'a later millisecond gets its own text');
    assert.equal(timestamp(new Date(0)), '1970-01-01T00:00:00.000Z');
  });
});
