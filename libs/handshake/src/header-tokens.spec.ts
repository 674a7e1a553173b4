import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasToken, isToken, splitHeaderList } from './header-tokens.js';

describe('isToken', () => {
  it('accepts every RFC 7230 tchar', () => {
    assert.equal(isToken("!#$%&'*+-.^_`|~09AZaz"), true);
    assert.equal(isToken('chat.v2'), true);
  });

  it('rejects the empty string, separators, whitespace, controls and non-ASCII', () => {
    for (const s of [
      '',
      'a b',
      'a,b',
      'a;b',
      'a=b',
      '"a"',
      'a/b',
      'a:b',
      '(a)',
      '[a]',
      '{a}',
      'a\tb',
      'a\u0000',
      'é',
      'a\u007f',
    ]) {
      assert.equal(isToken(s), false, JSON.stringify(s));
    }
  });
});

describe('splitHeaderList', () => {
  it('splits one value on commas and trims SP/HTAB around items', () => {
    assert.deepEqual(splitHeaderList(['a, b ,\tc']), ['a', 'b', 'c']);
  });

  it('treats several header lines as one list, in order', () => {
    assert.deepEqual(splitHeaderList(['a, b', 'c']), ['a', 'b', 'c']);
  });

  it('returns [] for an absent header', () => {
    assert.deepEqual(splitHeaderList([]), []);
  });

  it('keeps inner whitespace so the caller can reject non-tokens', () => {
    assert.deepEqual(splitHeaderList(['a b']), ['a b']);
  });

  it('returns null for any empty element', () => {
    for (const values of [[''], [' '], ['a,,b'], ['a,'], [',a'], ['a, ,b'], ['a', '']]) {
      assert.equal(splitHeaderList(values), null, JSON.stringify(values));
    }
  });
});

describe('hasToken', () => {
  it('finds a token case-insensitively among other items', () => {
    assert.equal(hasToken(['keep-alive, Upgrade'], 'upgrade'), true);
    assert.equal(hasToken(['UPGRADE'], 'upgrade'), true);
    assert.equal(hasToken(['upgrade'], 'Upgrade'), true);
  });

  it('looks across header lines', () => {
    assert.equal(hasToken(['keep-alive', 'upgrade'], 'upgrade'), true);
  });

  it('ignores empty elements instead of failing', () => {
    assert.equal(hasToken([',, keep-alive ,\t, upgrade,'], 'upgrade'), true);
    assert.equal(hasToken(['', ','], 'upgrade'), false);
  });

  it('matches whole items only', () => {
    assert.equal(hasToken(['upgrader, x-upgrade'], 'upgrade'), false);
    assert.equal(hasToken(['up grade'], 'upgrade'), false);
    assert.equal(hasToken([], 'upgrade'), false);
  });

  it('never matches an empty token', () => {
    assert.equal(hasToken(['a,,b'], ''), false);
  });
});
