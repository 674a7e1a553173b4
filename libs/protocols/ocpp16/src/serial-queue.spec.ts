import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SerialQueue } from './serial-queue.js';

describe('SerialQueue', () => {
  it('runs tasks one at a time, in order', async () => {
    const errors: unknown[] = [];
    const queue = new SerialQueue(10, (err) => errors.push(err));
    const log: string[] = [];
    let running = 0;
    const task = (name: string) => async () => {
      running++;
      assert.equal(running, 1);
      log.push(`start ${name}`);
      await new Promise((resolve) => setImmediate(resolve));
      log.push(`end ${name}`);
      running--;
    };
    queue.push(task('a'));
    queue.push(task('b'));
    const done = new Promise<void>((resolve) => queue.push(async () => resolve()));
    await done;
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b']);
    assert.deepEqual(errors, []);
  });

  it('refuses past its bound, and frees the slots as tasks finish', async () => {
    const queue = new SerialQueue(2, () => undefined);
    let release: () => void = () => undefined;
    assert.ok(queue.push(() => new Promise<void>((resolve) => (release = resolve))));
    assert.ok(queue.push(async () => undefined));
    assert.equal(
      queue.push(async () => undefined),
      false,
    );
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(queue.size, 0);
    assert.ok(queue.push(async () => undefined));
  });

  it('a task that throws before returning its promise is reported too, and the queue goes on', async () => {
    const errors: unknown[] = [];
    const queue = new SerialQueue(5, (err) => errors.push(err));
    queue.push(() => {
      throw new Error('at once');
    });
    const ran = new Promise<boolean>((resolve) => queue.push(async () => resolve(true)));
    assert.equal(await ran, true);
    assert.deepEqual(
      errors.map((err) => (err as Error).message),
      ['at once'],
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(queue.size, 0);
  });

  it('a failing task is reported and does not stop the ones behind it', async () => {
    const errors: unknown[] = [];
    const queue = new SerialQueue(5, (err) => errors.push(err));
    queue.push(async () => {
      throw new Error('boom');
    });
    const ran = new Promise<boolean>((resolve) => queue.push(async () => resolve(true)));
    assert.equal(await ran, true);
    assert.equal((errors[0] as Error).message, 'boom');
  });
});
