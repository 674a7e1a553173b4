import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CACHED_TOKEN_LENGTH, VerifiedTokenCache } from './verified-token-cache.js';

describe('VerifiedTokenCache', () => {
  it('returns what was kept for exactly that token, and nothing for another', () => {
    const cache = new VerifiedTokenCache<{ sub: string }>(4);
    cache.set('a.b.c', { sub: 'alice' });
    assert.deepEqual(cache.get('a.b.c'), { sub: 'alice' });
    assert.equal(cache.get('a.b.C'), undefined);
    assert.equal(cache.get('a.b.c '), undefined);
  });

  it('drops the least recently used entry at capacity', () => {
    const cache = new VerifiedTokenCache<{ n: number }>(2);
    cache.set('one', { n: 1 });
    cache.set('two', { n: 2 });
    cache.get('one');
    cache.set('three', { n: 3 });
    assert.equal(cache.size, 2);
    assert.equal(cache.get('two'), undefined, 'two was the least recently used');
    assert.deepEqual(cache.get('one'), { n: 1 });
    assert.deepEqual(cache.get('three'), { n: 3 });
  });

  it('keeps a token used again within half the capacity, however many others come and go', () => {
    const cache = new VerifiedTokenCache<{ n: number }>(4);
    cache.set('hot', { n: 0 });
    for (let i = 1; i <= 20; i++) {
      cache.set(`cold-${i}`, { n: i });
      assert.deepEqual(cache.get('hot'), { n: 0 }, `after ${i} other tokens`);
      assert.ok(cache.size <= 4);
    }
    assert.equal(cache.get('cold-1'), undefined);
  });

  it('keeps one copy of a token set twice, and no more than the capacity', () => {
    const cache = new VerifiedTokenCache<{ n: number }>(4);
    cache.set('a', { n: 1 });
    cache.set('b', { n: 2 });
    cache.set('c', { n: 3 });
    cache.set('a', { n: 4 });
    cache.set('c', { n: 5 });
    assert.equal(cache.size, 3);
    assert.deepEqual(cache.get('b'), { n: 2 }, 'setting a kept token again made no room');
    assert.deepEqual(cache.get('a'), { n: 4 });
    assert.deepEqual(cache.get('c'), { n: 5 });
    for (let i = 0; i < 10; i++) cache.set(`t-${i}`, { n: i });
    assert.ok(cache.size <= 4);
  });

  it('keeps nothing with capacity 0, and no token longer than the limit', () => {
    const off = new VerifiedTokenCache<{ n: number }>(0);
    off.set('one', { n: 1 });
    assert.equal(off.get('one'), undefined);
    const cache = new VerifiedTokenCache<{ n: number }>(4);
    const long = 'x'.repeat(MAX_CACHED_TOKEN_LENGTH + 1);
    cache.set(long, { n: 1 });
    assert.equal(cache.get(long), undefined);
    assert.equal(cache.size, 0);
  });

  it("freezes what it returns, nested values included, so no connection can change another one's claims", () => {
    const cache = new VerifiedTokenCache<{ sub: string; scopes: string[]; ext: { tier: string } }>(4);
    const kept = cache.set('t', { sub: 'alice', scopes: ['read'], ext: { tier: 'gold' } });
    assert.ok(Object.isFrozen(kept));
    assert.throws(() => kept.scopes.push('admin'), TypeError);
    assert.throws(() => {
      (kept.ext as { tier: string }).tier = 'platinum';
    }, TypeError);
    assert.deepEqual(cache.get('t')?.scopes, ['read']);
  });
});
