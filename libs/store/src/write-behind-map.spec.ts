import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { WriteBehindMap } from './write-behind-map.js';

/**
 * A writer that records each write and fails while `failing` is set. A write that starts while `held`
 * is set does not finish until that promise resolves, so the test decides what happens during a
 * write, whatever the timers do. `hold()` holds the writes that start from now on and returns what
 * releases them.
 */
function recordingWriter() {
  const writes: [string, number][][] = [];
  const state: { failing: boolean; held: Promise<void> | null } = { failing: false, held: null };
  const write = async (entries: ReadonlyMap<string, number>): Promise<void> => {
    writes.push([...entries]);
    // Taken when the write starts: a test that holds the next write meanwhile does not hold this one.
    const held = state.held;
    await new Promise((resolve) => setImmediate(resolve));
    if (held !== null) await held;
    if (state.failing) throw new Error('database is down');
  };
  const hold = (): (() => void) => {
    let release = (): void => undefined;
    state.held = new Promise((resolve) => (release = resolve));
    return release;
  };
  return { writes, state, write, hold };
}

/**
 * A map whose writes fail, the first of them held from the start: so no retry can fail again before
 * the test has looked. `releaseFirst` lets that first write finish (and fail).
 */
function failingMap() {
  const writer = recordingWriter();
  const errors: string[] = [];
  const map = new WriteBehindMap(writer.write, 1, (err) => errors.push((err as Error).message));
  writer.state.failing = true;
  const releaseFirst = writer.hold();
  return { ...writer, map, errors, releaseFirst };
}

/** For maps whose writes must not fail: a failure becomes an unhandled rejection, failing the run. */
const noError = (err: unknown): never => assert.fail(`unexpected write failure: ${String(err)}`);

/** Waits, a turn at a time and at most 2000 turns, until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 2000 && !condition(); turn++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  assert.ok(condition(), 'the condition never held');
}

describe('WriteBehindMap', () => {
  it('keeps the latest value of each key, visible at once, and writes them together', async () => {
    const { writes, write } = recordingWriter();
    const map = new WriteBehindMap(write, 60_000, noError);
    map.set('a', 1);
    map.set('b', 2);
    map.set('a', 3);
    assert.equal(map.get('a'), 3);
    assert.deepEqual(
      [...map.unwritten()],
      [
        ['a', 3],
        ['b', 2],
      ],
    );
    assert.deepEqual(writes, [], 'nothing is written before the delay or a flush');
    await map.flush();
    assert.deepEqual(writes, [
      [
        ['a', 3],
        ['b', 2],
      ],
    ]);
    assert.equal(map.get('a'), undefined);
    assert.equal(map.unwritten().size, 0);
  });

  it('writes on its own after the delay', async () => {
    const { writes, write } = recordingWriter();
    const map = new WriteBehindMap(write, 1, noError);
    map.set('a', 1);
    await until(() => writes.length === 1 && map.unwritten().size === 0);
    assert.deepEqual(writes, [[['a', 1]]]);
  });

  it('a failed write is reported, keeps its values unless newer ones came, and is retried', async () => {
    const { writes, state, hold, map, errors, releaseFirst } = failingMap();
    map.set('a', 1);
    map.set('b', 1);
    await until(() => writes.length === 1);
    map.set('b', 2);
    const releaseSecond = hold();
    releaseFirst();
    await until(() => errors.length === 1 && writes.length === 2);
    assert.deepEqual(
      [...map.unwritten()].sort(),
      [
        ['a', 1],
        ['b', 2],
      ],
      'b keeps its newer value',
    );
    assert.deepEqual(writes[1]?.sort(), [
      ['a', 1],
      ['b', 2],
    ]);
    state.failing = false;
    state.held = null;
    releaseSecond();
    await until(() => map.unwritten().size === 0);
    assert.equal(writes.length, 2, 'the retry succeeded');
    assert.deepEqual(errors, ['database is down']);
  });

  it('retries a failed write on its own, with no newer value to start it', async () => {
    const { writes, state, hold, map, errors, releaseFirst } = failingMap();
    map.set('a', 1);
    await until(() => writes.length === 1);
    const releaseSecond = hold();
    releaseFirst();
    await until(() => writes.length === 2);
    assert.deepEqual(errors, ['database is down']);
    state.failing = false;
    state.held = null;
    releaseSecond();
    await until(() => map.unwritten().size === 0);
    assert.deepEqual(writes, [[['a', 1]], [['a', 1]]]);
  });

  it('a flush during a timed write waits for it, then writes what came meanwhile: nothing is lost', async () => {
    const { writes, state, write, hold } = recordingWriter();
    const release = hold();
    const map = new WriteBehindMap(write, 1, noError);
    map.set('a', 1);
    await until(() => writes.length === 1);
    map.set('b', 2);
    assert.equal(map.get('a'), 1, 'still readable while it is being written');
    const flushed = map.flush();
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(writes.length, 1, 'the flush waits for the write under way before it writes b');
    state.held = null;
    release();
    await flushed;
    assert.deepEqual(writes, [[['a', 1]], [['b', 2]]]);
  });

  it('close writes what is left, takes no more, and rejects when that write fails', async () => {
    const { writes, state, write } = recordingWriter();
    const map = new WriteBehindMap(write, 60_000, noError);
    map.set('a', 1);
    state.failing = true;
    await assert.rejects(map.close(), /database is down/);
    map.set('b', 2);
    assert.equal(map.get('b'), undefined);
    assert.deepEqual(writes, [[['a', 1]]]);
  });
});
