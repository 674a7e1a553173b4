import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../cli-options.js';
import { parseShapes } from './cluster-options.js';

describe('cluster benchmark shapes', () => {
  it('reads PxS/W, and PxS/Wp for subscribers with persistent sessions', () => {
    assert.deepEqual(parseShapes('10x1/50,10x1/50p'), [
      { publishers: 10, subscribers: 1, window: 50, persistent: false, label: '10 → 1' },
      { publishers: 10, subscribers: 1, window: 50, persistent: true, label: '10 → 1, persistent' },
    ]);
    assert.throws(() => parseShapes('10x1/50q'), UsageError);
    assert.throws(() => parseShapes('10x1/50,10x1/20'), UsageError);
  });
});
