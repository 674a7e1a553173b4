import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { filterWithin, parseFilter } from './topic-filter.js';

describe('parseFilter', () => {
  it('splits a shared subscription into group and filter', () => {
    assert.deepEqual(parseFilter('$share/workers/jobs/+'), { group: 'workers', filter: 'jobs/+' });
    assert.deepEqual(parseFilter('a/#'), { group: null, filter: 'a/#' });
  });

  it('refuses bad filters and bad share groups', () => {
    for (const bad of ['a/#/b', 'a+', '', '$share/g', '$share//a', '$share/g+/a', '$share/g/a/#/b']) {
      assert.throws(() => parseFilter(bad), { name: 'InvalidTopicError' }, bad);
    }
  });
});

describe('filterWithin', () => {
  const cases: [string, string, boolean][] = [
    ['a/b', 'a/#', true],
    ['a', 'a/#', true],
    ['a/+/c', 'a/#', true],
    ['a/#', 'a/#', true],
    ['a/b', 'a/+', true],
    ['a/+', 'a/+', true],
    ['a/#', 'a/+', false],
    ['a/+', 'a/b', false],
    ['a/b/c', 'a/+', false],
    ['b/c', 'a/#', false],
    ['#', 'a/#', false],
    ['$SYS/x', '#', false],
    ['$SYS/x', '$SYS/#', true],
    ['x/y', '#', true],
  ];
  for (const [filter, scope, expected] of cases) {
    it(`${filter} within ${scope}: ${expected}`, () => assert.equal(filterWithin(filter, scope), expected));
  }
});
