import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HeldInput } from './held-input.js';

describe('HeldInput', () => {
  it('holds in order within the limits and empties on take', () => {
    const held = new HeldInput<string>({ maxQueued: 2, maxBytes: 10 });
    assert.equal(held.push('a', 4), null);
    assert.equal(held.push('b', 6), null, 'exactly maxBytes is allowed');
    assert.deepEqual(held.take(), ['a', 'b']);
    assert.deepEqual(held.take(), []);
    assert.equal(held.push('c', 10), null, 'take resets the counts');
  });

  it('past maxQueued or maxBytes answers why the connection must close', () => {
    const queued = new HeldInput<string>({ maxQueued: 1, maxBytes: 100 });
    assert.equal(queued.push('a', 1), null);
    assert.equal(queued.push('b', 1), 'too many messages before authentication');
    const bytes = new HeldInput<string>({ maxQueued: 10, maxBytes: 5 });
    assert.equal(bytes.push('a', 6), 'too much data before authentication');
    assert.deepEqual(bytes.take(), []);
  });

  it('names when it holds in its reasons', () => {
    const held = new HeldInput<string>({ maxQueued: 1, maxBytes: 4 }, 'behind a SUBSCRIBE');
    assert.equal(held.push('a', 1), null);
    assert.equal(held.push('b', 1), 'too many messages behind a SUBSCRIBE');
    assert.equal(held.charge(4), 'too much data behind a SUBSCRIBE');
  });

  it('charges bytes that are not held towards maxBytes', () => {
    const held = new HeldInput<string>({ maxQueued: 0, maxBytes: 8 });
    assert.equal(held.charge(8), null);
    assert.equal(held.charge(1), 'too much data before authentication');
  });
});
