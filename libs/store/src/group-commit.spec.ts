import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GroupCommit } from './group-commit.js';
import { CommitNotDurableError } from './errors.js';

/** A writer that records each batch and settles it when the test says so. */
function recordingWriter(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const write = async (items: readonly number[]): Promise<number> => {
    batches.push([...items]);
    await new Promise((resolve) => setImmediate(resolve));
    if (items.some(fail)) throw new Error(`cannot write ${items.join(',')}`);
    return 0;
  };
  return { batches, write };
}

describe('GroupCommit', () => {
  it("shares out the loop time a batch's write reports by the items' weights", async () => {
    const timed = new GroupCommit(async (items: readonly string[]) => 12 * items.length, 100);
    assert.deepEqual(
      await Promise.all([timed.add('a', 1), timed.add('b', 2), timed.add('c', 3)]),
      [6, 12, 18],
    );
  });

  it('writes the items of one tick in one batch, and settles each only after the write', async () => {
    const { batches, write } = recordingWriter();
    const commit = new GroupCommit(write, 100);
    const settled: number[] = [];
    const all = [1, 2, 3].map((n) => commit.add(n).then(() => settled.push(n)));
    assert.deepEqual(batches, [], 'nothing is written before the tick ends');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(batches, [[1, 2, 3]]);
    assert.deepEqual(settled, [], 'nobody is answered before the write finishes');
    await Promise.all(all);
    assert.deepEqual(settled, [1, 2, 3]);
  });

  it('splits a burst into batches of at most maxBatch, and starts a new batch in the next tick', async () => {
    const { batches, write } = recordingWriter();
    const commit = new GroupCommit(write, 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => commit.add(n)));
    await commit.add(6);
    assert.deepEqual(batches, [[1, 2], [3, 4], [5], [6]]);
  });

  it('keeps one write in flight: what arrives meanwhile, over any number of ticks, is the next batch', async () => {
    const batches: number[][] = [];
    const releases: (() => void)[] = [];
    const write = async (items: readonly number[]): Promise<number> => {
      batches.push([...items]);
      await new Promise<void>((resolve) => releases.push(resolve));
      return 0;
    };
    const commit = new GroupCommit(write, 100);
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const first = commit.add(1);
    await turn();
    const later = [commit.add(2)];
    await turn();
    later.push(commit.add(3));
    await turn();
    assert.deepEqual(batches, [[1]], 'no second write starts while the first is in flight');
    releases.shift()?.();
    await first;
    await turn();
    assert.deepEqual(batches, [[1], [2, 3]]);
    releases.shift()?.();
    await Promise.all(later);
    await commit.drain();
  });

  it('retries a failed batch item by item: only the bad item fails', async () => {
    const { batches, write } = recordingWriter((n) => n === 2);
    const commit = new GroupCommit(write, 100);
    const results = await Promise.allSettled([1, 2, 3].map((n) => commit.add(n)));
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((results[1] as PromiseRejectedResult).reason), /cannot write 2/);
    assert.deepEqual(batches, [[1, 2, 3], [1], [2], [3]]);
  });

  it('a batch committed but not known to be on disk fails whole: a retry would store it twice', async () => {
    const batches: number[][] = [];
    const commit = new GroupCommit(async (items: readonly number[]) => {
      batches.push([...items]);
      await new Promise((resolve) => setImmediate(resolve));
      throw new CommitNotDurableError('store: the SQLite WAL could not be synced: EIO');
    }, 100);
    const results = await Promise.allSettled([1, 2, 3].map((n) => commit.add(n)));
    assert.ok(results.every((r) => r.status === 'rejected' && r.reason instanceof CommitNotDurableError));
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('drain writes what is queued and waits for writes in flight', async () => {
    const { batches, write } = recordingWriter();
    const commit = new GroupCommit(write, 100);
    let done = false;
    void commit.add(7).then(() => (done = true));
    await commit.drain();
    assert.deepEqual(batches, [[7]]);
    assert.equal(done, true);
    await commit.drain();
  });
});
