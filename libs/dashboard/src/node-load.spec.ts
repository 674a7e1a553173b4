import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { NodeLoad } from './node-load.js';

describe('NodeLoad', () => {
  it('gives memory at once, CPU and the loop delay from the second reading on', async () => {
    const load = new NodeLoad();
    try {
      const first = load.read();
      assert.deepEqual([first.cpu, first.loopDelayP99Ms], [null, null]);
      assert.ok(first.rssBytes > 0);
      // The loop held for 60 ms once, and busy meanwhile: both show in the next reading.
      await sleep(30);
      const until = performance.now() + 60;
      while (performance.now() < until);
      await sleep(30);
      const second = load.read();
      assert.ok(second.cpu !== null && second.cpu > 0, String(second.cpu));
      assert.ok(second.loopDelayP99Ms !== null && second.loopDelayP99Ms >= 30, String(second.loopDelayP99Ms));
    } finally {
      load.close();
    }
  });
});
