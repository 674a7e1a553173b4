import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_REFUSED_OPERATIONS, REFUSED_WINDOW_MS, RefusedOperations } from './refused-operations.js';

describe('RefusedOperations', () => {
  it('allows the limit within a window, refuses one more, and starts again in the next window', () => {
    let now = 1_000_000;
    const refused = new RefusedOperations(() => now);
    for (let i = 0; i < MAX_REFUSED_OPERATIONS; i++) assert.equal(refused.add(), false);
    assert.equal(refused.add(), true);
    now += REFUSED_WINDOW_MS + 1;
    assert.equal(refused.add(), false);
  });
});
