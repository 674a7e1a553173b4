import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_LIMITS, resolveLimits } from './graphql.options.js';

describe('resolveLimits', () => {
  it('completes the given limits with the defaults', () => {
    assert.deepEqual(resolveLimits(), DEFAULT_LIMITS);
    assert.deepEqual(resolveLimits({ maxOperations: 5, keepAliveMs: 0 }), {
      ...DEFAULT_LIMITS,
      maxOperations: 5,
      keepAliveMs: 0,
    });
  });

  it('refuses a limit that is not a positive integer, naming it', () => {
    assert.throws(
      () => resolveLimits({ maxDepth: 0 }),
      /limits\.maxDepth: must be an integer of at least 1, got 0/,
    );
    assert.throws(() => resolveLimits({ initTimeoutMs: 1.5 }), /limits\.initTimeoutMs/);
    assert.throws(
      () => resolveLimits({ keepAliveMs: -1 }),
      /limits\.keepAliveMs: must be an integer of at least 0/,
    );
    assert.throws(
      () => resolveLimits({ initTimeoutMs: 2 ** 31 }),
      /limits\.initTimeoutMs: must be an integer of at least 1 and at most 2147483647, got 2147483648/,
    );
  });
});
