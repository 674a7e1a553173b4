import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { onCredentialExpiry } from './credential-expiry.js';

const principal = (claims: Record<string, unknown>) => ({ subject: 's', claims, carrier: 'query' as const });

describe('onCredentialExpiry', () => {
  it('fires when exp passes, not before, and not after being cancelled', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      let fired = 0;
      onCredentialExpiry(principal({ exp: 1_000 + 60 }), () => fired++);
      mock.timers.tick(59_999);
      assert.equal(fired, 0);
      mock.timers.tick(1);
      assert.equal(fired, 1);

      const cancel = onCredentialExpiry(principal({ exp: 1_000 + 120 }), () => fired++);
      cancel();
      mock.timers.tick(200_000);
      assert.equal(fired, 1);
    } finally {
      mock.timers.reset();
    }
  });

  it('re-arms past the longest timer delay, fires at once for a past exp, ignores a missing one', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
    try {
      let fired = 0;
      const days40 = 40 * 24 * 3600;
      onCredentialExpiry(principal({ exp: days40 }), () => fired++);
      mock.timers.tick(2 ** 31 - 1);
      assert.equal(fired, 0);
      mock.timers.tick(days40 * 1000 - (2 ** 31 - 1));
      assert.equal(fired, 1);
      onCredentialExpiry(principal({ exp: -1 }), () => fired++);
      assert.equal(fired, 2);
      onCredentialExpiry(principal({ exp: 'soon' }), () => fired++);
      onCredentialExpiry(null, () => fired++);
      mock.timers.tick(10 ** 9);
      assert.equal(fired, 2);
    } finally {
      mock.timers.reset();
    }
  });
});

describe('onCredentialExpiry with many connections', () => {
  it('fires every connection of one expiry second, each once, and only those not cancelled', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      const fired: string[] = [];
      onCredentialExpiry(principal({ exp: 1_060 }), () => fired.push('a'));
      const cancelB = onCredentialExpiry(principal({ exp: 1_060 }), () => fired.push('b'));
      onCredentialExpiry(principal({ exp: 1_060 }), () => fired.push('c'));
      onCredentialExpiry(principal({ exp: 1_061 }), () => fired.push('d'));
      cancelB();
      mock.timers.tick(60_000);
      assert.deepEqual(fired, ['a', 'c']);
      mock.timers.tick(1_000);
      assert.deepEqual(fired, ['a', 'c', 'd']);
      mock.timers.tick(100_000);
      assert.deepEqual(fired, ['a', 'c', 'd']);
    } finally {
      mock.timers.reset();
    }
  });

  it('keeps a second armed while one of its connections remains, and registers a second after it fired', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      let fired = 0;
      const first = onCredentialExpiry(principal({ exp: 1_010 }), () => fired++);
      onCredentialExpiry(principal({ exp: 1_010 }), () => fired++);
      first();
      first();
      mock.timers.tick(10_000);
      assert.equal(fired, 1);
      onCredentialExpiry(principal({ exp: 1_020 }), () => fired++);
      mock.timers.tick(10_000);
      assert.equal(fired, 2);
    } finally {
      mock.timers.reset();
    }
  });

  it('fires a fractional exp at the end of its second, not before the credential expires', () => {
    mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 });
    try {
      let fired = 0;
      onCredentialExpiry(principal({ exp: 1_030.2 }), () => fired++);
      mock.timers.tick(30_200);
      assert.equal(fired, 0);
      mock.timers.tick(800);
      assert.equal(fired, 1);
    } finally {
      mock.timers.reset();
    }
  });
});
