import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { MAX_WAITING_REQUESTS, SocketOrder } from './socket-order.js';

/** Turns of the loop enough for a socket's whole queue: each pipelined request waits for one. */
async function tick(): Promise<void> {
  for (let i = 0; i <= MAX_WAITING_REQUESTS; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('SocketOrder', () => {
  it('runs the requests of one socket one after the other, however long each takes', async () => {
    const order = new SocketOrder(() => assert.fail('no failure expected'));
    const socket = new PassThrough();
    const done: string[] = [];
    let release!: () => void;
    order.run(socket, () =>
      new Promise<void>((resolve) => (release = resolve)).then(() => void done.push('first')),
    );
    order.run(socket, async () => void done.push('second'));
    await tick();
    assert.deepEqual(done, [], 'the second waits for the first');
    release();
    await tick();
    assert.deepEqual(done, ['first', 'second']);
  });

  it('serves nothing behind a refusal: the socket is destroyed instead', async () => {
    const order = new SocketOrder(() => assert.fail('no failure expected'));
    const socket = new PassThrough();
    let served = false;
    order.run(socket, async () => order.refuse(socket));
    order.run(socket, async () => void (served = true));
    await tick();
    assert.equal(served, false);
    assert.equal(socket.destroyed, true);
  });

  it('a request that throws goes to the failure handler, with its socket', async () => {
    const failures: [Error, unknown][] = [];
    const order = new SocketOrder((err, socket) => failures.push([err, socket]));
    const socket = new PassThrough();
    order.run(socket, () => Promise.reject(new Error('boom')));
    await tick();
    assert.equal(failures[0]?.[0].message, 'boom');
    assert.equal(failures[0]?.[1], socket);
  });

  it('an upgrade (not followed) keeps no promise on its socket; a later request does not wait for it', async () => {
    const order = new SocketOrder(() => assert.fail('no failure expected'));
    const socket = new PassThrough();
    const done: string[] = [];
    order.run(socket, () => new Promise<void>(() => undefined), false);
    order.run(socket, async () => void done.push('after'));
    await tick();
    assert.deepEqual(done, ['after']);
  });

  it('a socket past MAX_WAITING_REQUESTS waiting is destroyed and reported; what waited is not served, a finished queue frees its room', async () => {
    const overflowed: unknown[] = [];
    const order = new SocketOrder(
      () => assert.fail('no failure expected'),
      (socket) => overflowed.push(socket),
    );
    const calm = new PassThrough();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < MAX_WAITING_REQUESTS; i++) order.run(calm, async () => undefined);
      await tick();
    }
    assert.equal(calm.destroyed, false, 'waiting requests that finish give their room back');
    const flood = new PassThrough();
    let served = 0;
    let release!: () => void;
    order.run(flood, () => new Promise<void>((resolve) => (release = resolve)));
    for (let i = 1; i <= MAX_WAITING_REQUESTS; i++) order.run(flood, async () => void served++);
    assert.equal(flood.destroyed, true);
    assert.deepEqual(overflowed, [flood]);
    release();
    await tick();
    assert.equal(served, 0);
  });

  it('a pipelined request waits for a turn of the loop: other sockets go between two of one socket', async () => {
    const order = new SocketOrder(() => assert.fail('no failure expected'));
    const socket = new PassThrough();
    const events: string[] = [];
    order.run(socket, async () => void events.push('first'));
    order.run(socket, async () => void events.push('second'));
    setImmediate(() => events.push('another socket'));
    await tick();
    assert.deepEqual(events, ['first', 'another socket', 'second']);
  });
});
