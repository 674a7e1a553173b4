import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookupCap } from './lookup-cap.js';

/** A lookup that settles when the test says so. */
function pending(): { lookup: () => Promise<boolean>; answer(value: boolean): void; fail(): void } {
  let answer: (value: boolean) => void = () => undefined;
  let fail: () => void = () => undefined;
  const promise = new Promise<boolean>((resolve, reject) => {
    answer = resolve;
    fail = () => reject(new Error('no answer'));
  });
  return { lookup: () => promise, answer: (value) => answer(value), fail: () => fail() };
}

describe('LookupCap', () => {
  it('runs lookups up to its cap, then refuses without starting one', async () => {
    const cap = new LookupCap(2);
    const first = pending();
    const second = pending();
    let started = false;
    const a = cap.run(first.lookup);
    const b = cap.run(second.lookup);
    assert.notEqual(a, null);
    assert.notEqual(b, null);
    const refused = cap.run(() => {
      started = true;
      return Promise.resolve(true);
    });
    assert.equal(refused, null);
    assert.equal(started, false);
    first.answer(true);
    second.answer(false);
    assert.deepEqual(await Promise.all([a, b]), [true, false]);
  });

  it('a settled lookup frees its place, whether it answered or failed', async () => {
    const cap = new LookupCap(1);
    const failing = pending();
    const a = cap.run(failing.lookup);
    assert.equal(
      cap.run(() => Promise.resolve(true)),
      null,
    );
    failing.fail();
    await assert.rejects(a ?? Promise.resolve(), /no answer/);
    assert.equal(await cap.run(() => Promise.resolve(true)), true);
    assert.equal(await cap.run(() => Promise.resolve(false)), false);
  });
});
