import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import type WebSocket from 'ws';
import { MessageInbox, openMany } from './ws-client.js';

const fakeSocket = (): EventEmitter => new EventEmitter();
const inboxOf = (socket: EventEmitter): MessageInbox => new MessageInbox(socket as unknown as WebSocket);
const text = (socket: EventEmitter, message: string): boolean =>
  socket.emit('message', Buffer.from(message), false);

describe('MessageInbox', () => {
  it('keeps messages that arrive before anyone reads, in order, for next and then forEach', async () => {
    const socket = fakeSocket();
    const inbox = inboxOf(socket);
    text(socket, 'a');
    text(socket, 'b');
    text(socket, 'c');
    assert.equal(await inbox.next(100, 'a'), 'a');
    const seen: string[] = [];
    inbox.forEach(
      (m) => seen.push(m),
      () => assert.fail('not closed'),
    );
    text(socket, 'd');
    assert.deepEqual(seen, ['b', 'c', 'd']);
  });

  it('rejects next on a close or a timeout, naming what it waited for', async () => {
    const socket = fakeSocket();
    const inbox = inboxOf(socket);
    await assert.rejects(inbox.next(10, 'WELCOME'), /no WELCOME within 10 ms/);
    const waiting = inbox.next(1000, 'WELCOME');
    socket.emit('close', 1002, Buffer.from('bye'));
    await assert.rejects(waiting, /closed 1002 bye before WELCOME/);
  });

  it('reports a close to forEach', () => {
    const socket = fakeSocket();
    const inbox = inboxOf(socket);
    let why = '';
    inbox.forEach(
      () => {},
      (reason) => (why = reason),
    );
    socket.emit('close', 1006, Buffer.alloc(0));
    assert.equal(why, 'closed 1006');
  });
});

describe('openMany', () => {
  it('opens every index once, never more than `concurrency` at a time', async () => {
    let running = 0;
    let most = 0;
    const opened = await openMany(10, 3, async (i) => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 1));
      running--;
      return i * 2;
    });
    assert.deepEqual(opened, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]);
    assert.equal(most, 3);
  });
});
