import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { type WebSocket } from 'ws';
import { FLUSH_AFTER_FRAMES, WsConnection } from './ws-connection.js';

/** The parts of a ws WebSocket that WsConnection uses, recording what is sent. */
class FakeWs extends EventEmitter {
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: unknown[] = [];
  send(data: unknown): void {
    this.sent.push(data);
  }
}

function connection() {
  const ws = new FakeWs();
  const calls: string[] = [];
  const socket = { cork: () => calls.push('cork'), uncork: () => calls.push('uncork') };
  const observer = { sent: () => undefined, overflowed: () => undefined, failed: () => undefined };
  const conn = new WsConnection('c1', ws as unknown as WebSocket, socket, 1024, observer);
  return { conn, ws, calls };
}

const nextTick = (): Promise<void> => new Promise((resolve) => process.nextTick(resolve));
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('WsConnection', () => {
  it('corks the socket once for the frames of one turn of the event loop and uncorks after its I/O', async () => {
    const { conn, ws, calls } = connection();
    conn.send(Buffer.from([1]));
    conn.send(Buffer.from([2]));
    await nextTick();
    conn.send('three');
    assert.deepEqual(calls, ['cork'], 'still corked after a tick: another read may add frames');
    assert.equal(ws.sent.length, 3);
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork']);
    conn.send(Buffer.from([4]));
    assert.deepEqual(calls, ['cork', 'uncork', 'cork']);
    await nextTurn();
    assert.deepEqual(calls, ['cork', 'uncork', 'cork', 'uncork']);
  });

  it('writes a full batch at once, so the peer starts on it while the turn goes on', async () => {
    const { conn, ws, calls } = connection();
    for (let i = 0; i < FLUSH_AFTER_FRAMES - 1; i++) conn.send(Buffer.from([i]));
    assert.deepEqual(calls, ['cork'], 'a batch short of the limit waits for the turn to end');
    conn.send('the last of the batch');
    assert.deepEqual(
      calls,
      ['cork', 'uncork', 'cork'],
      'written now, and corked again for the rest of the turn',
    );
    for (let i = 0; i < FLUSH_AFTER_FRAMES; i++) conn.send(Buffer.from([i]));
    assert.deepEqual(calls, ['cork', 'uncork', 'cork', 'uncork', 'cork'], 'each full batch counts from zero');
    conn.send('one more');
    await nextTurn();
    assert.deepEqual(
      calls,
      ['cork', 'uncork', 'cork', 'uncork', 'cork', 'uncork'],
      'the rest at the end of the turn',
    );
    assert.equal(ws.sent.length, 2 * FLUSH_AFTER_FRAMES + 1);
    conn.send('next turn');
    for (let i = 0; i < FLUSH_AFTER_FRAMES - 2; i++) conn.send(Buffer.from([i]));
    await nextTurn();
    assert.equal(calls.slice(6).join(), 'cork,uncork', 'a new turn counts from zero');
  });

  it('uncorks every connection corked in the turn', async () => {
    const a = connection();
    const b = connection();
    a.conn.send('to a');
    b.conn.send('to b');
    await nextTurn();
    assert.deepEqual(
      [a.calls, b.calls],
      [
        ['cork', 'uncork'],
        ['cork', 'uncork'],
      ],
    );
  });

  it('does not touch the socket when nothing is sent (closed connection)', async () => {
    const { conn, ws, calls } = connection();
    ws.readyState = ws.CLOSED;
    conn.send(Buffer.from([1]));
    await nextTurn();
    assert.deepEqual(calls, []);
    assert.equal(ws.sent.length, 0);
  });
});
