import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UriIndex } from './uri-index.js';

describe('URI index', () => {
  it('finds exact, prefix (longest first) and wildcard entries, in that order', () => {
    const index = new UriIndex<string>();
    index.set('wildcard', 'com..c', 'w1');
    index.set('prefix', 'com.a', 'p-short');
    index.set('exact', 'com.a.c', 'e');
    index.set('prefix', 'com.a.', 'p-long');
    index.set('wildcard', '.a.', 'w2');
    index.set('prefix', 'org', 'p-other');
    assert.deepEqual([...index.matching('com.a.c')], ['e', 'p-long', 'p-short', 'w1', 'w2']);
    assert.deepEqual([...index.matching('com.ab')], ['p-short']);
    assert.equal([...index.matching('com.a.x')][0], 'p-long');
    assert.deepEqual([...index.matching('net.a.x')], ['w2']);
    assert.deepEqual([...index.matching('net.x')], []);
    assert.deepEqual([...index.matching('c')], []);
  });

  it('orders wildcards by the components before each wildcard, then by insertion', () => {
    const index = new UriIndex<string>();
    index.set('wildcard', '..c', 'wild-at-0-and-1');
    index.set('wildcard', 'com..c', 'wild-at-1');
    index.set('wildcard', 'com.a.', 'wild-at-2');
    index.set('wildcard', '.a.', 'wild-at-0-and-2');
    assert.deepEqual(
      [...index.matching('com.a.c')],
      ['wild-at-2', 'wild-at-1', 'wild-at-0-and-2', 'wild-at-0-and-1'],
    );
  });

  it('get, set and delete per match policy; prefix lengths follow deletions', () => {
    const index = new UriIndex<number>();
    index.set('prefix', 'ab', 1);
    index.set('prefix', 'cd', 2);
    index.set('exact', 'ab', 3);
    assert.equal(index.get('prefix', 'ab'), 1);
    assert.equal(index.get('exact', 'ab'), 3);
    assert.equal(index.get('wildcard', 'ab'), undefined);
    index.delete('prefix', 'ab');
    assert.deepEqual([...index.matching('abc')], []);
    assert.deepEqual([...index.matching('cde')], [2]);
    index.delete('prefix', 'cd');
    index.delete('prefix', 'cd');
    assert.deepEqual([...index.matching('cde')], []);
    index.delete('exact', 'ab');
    index.set('wildcard', 'x.', 4);
    assert.deepEqual([...index.matching('x.y')], [4]);
    index.delete('wildcard', 'x.');
    assert.deepEqual([...index.matching('x.y')], []);
  });
});
