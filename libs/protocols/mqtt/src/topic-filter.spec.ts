import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseFilter } from './topic-filter.js';

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
