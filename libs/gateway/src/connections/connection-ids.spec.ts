import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextConnectionId } from './connection-ids.js';

describe('nextConnectionId', () => {
  it('issues distinct ids under one random prefix of this process', () => {
    const ids = Array.from({ length: 10_000 }, () => nextConnectionId());
    assert.equal(new Set(ids).size, ids.length);
    const prefixes = new Set(ids.map((id) => id.slice(0, id.lastIndexOf('-'))));
    assert.equal(prefixes.size, 1);
    assert.match(ids[0] as string, /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/);
  });
});
