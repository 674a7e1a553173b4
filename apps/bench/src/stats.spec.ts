import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { median, percentile, summarizeLatencies } from './stats.js';

describe('percentile', () => {
  it('uses the nearest rank', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(sorted, 50), 50);
    assert.equal(percentile(sorted, 99), 99);
    assert.equal(percentile(sorted, 100), 100);
    assert.equal(percentile([7], 99), 7);
  });

  it('is NaN for no values', () => {
    assert.ok(Number.isNaN(percentile([], 50)));
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the two middle ones', () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });
});

describe('summarizeLatencies', () => {
  it('sorts numerically, not as strings', () => {
    assert.deepEqual(summarizeLatencies([10, 9, 100, 2]), { p50: 9, p99: 100 });
  });
});
