import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { NodeLoad } from './node-load.js';

/** Holds the loop for 60 ms once, busy meanwhile, between two short waits. */
async function holdLoop(): Promise<void> {
  await sleep(30);
  const until = performance.now() + 60;
  while (performance.now() < until);
  await sleep(30);
}

describe('NodeLoad', () => {
  it('gives memory at once, CPU and the loop delay from the second reading on', async () => {
    let now = 0;
    const load = new NodeLoad(() => now);
    try {
      const first = load.read();
      assert.deepEqual([first.cpu, first.loopDelayP99Ms], [null, null]);
      assert.ok(first.rssBytes > 0);
      // The loop held and busy: both show in the next reading.
      await holdLoop();
      now = 1000;
      const second = load.read();
      assert.ok(second.cpu !== null && second.cpu > 0, String(second.cpu));
      assert.ok(second.loopDelayP99Ms !== null && second.loopDelayP99Ms >= 30, String(second.loopDelayP99Ms));
    } finally {
      load.close();
    }
  });

  it('a reading within 900 ms of the last gives its figures again and leaves the window running', async () => {
    let now = 0;
    const load = new NodeLoad(() => now);
    try {
      load.read();
      now = 1000;
      const second = load.read();
      await holdLoop();
      now = 1500;
      const early = load.read();
      assert.deepEqual([early.cpu, early.loopDelayP99Ms], [second.cpu, second.loopDelayP99Ms]);
      assert.ok(early.rssBytes > 0);
      // The loop held before the early reading: still in the window the next one closes.
      now = 2000;
      const third = load.read();
      assert.ok(third.loopDelayP99Ms !== null && third.loopDelayP99Ms >= 30, String(third.loopDelayP99Ms));
    } finally {
      load.close();
    }
  });
});
