import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flatUuid } from './flat-uuid.js';

const COUNT = 20_000;

/** Heap bytes each of COUNT strings made by `make` keeps while they are all alive. */
function retainedBytesEach(make: () => string): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const kept = new Array<string>(COUNT);
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < COUNT; i++) kept[i] = make();
  gc();
  const each = (process.memoryUsage().heapUsed - before) / COUNT;
  assert.equal(new Set(kept).size, COUNT, 'every id is distinct');
  return each;
}

describe('flatUuid', () => {
  it('is a random (version 4) UUID, after the prefix', () => {
    assert.match(flatUuid(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.match(
      flatUuid('auto-'),
      /^auto-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it('keeps a UUID in about a hundred bytes for as long as it lives (randomUUID keeps a 19-node rope)', () => {
    const each = retainedBytesEach(() => flatUuid('auto-'));
    assert.ok(each < 120, `${each.toFixed(0)} bytes retained per id`);
  });
});
