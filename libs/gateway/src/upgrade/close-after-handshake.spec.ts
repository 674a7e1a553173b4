import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { watchCloseHandshake } from './close-after-handshake.js';
import { receiverOf } from './ws-internals.js';

/** A real ws server and a client connected to it, with the server's side of the connection watched. */
async function watchedConnection(maxPayload?: number) {
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    ...(maxPayload === undefined ? {} : { maxPayload }),
  });
  await once(wss, 'listening');
  const accepted = once(wss, 'connection') as Promise<[WebSocket, { socket: Socket }]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
  const [[server, request]] = await Promise.all([accepted, once(client, 'open')]);
  server.on('error', () => undefined);
  watchCloseHandshake(request.socket, server);
  return { wss, client, server, socket: request.socket };
}

/**
 * These check what closeAfterCloseHandshake assumes of ws's private parts, with a real ws server and
 * client: the close frame is seen, the receiver is a Writable that has finished when our FIN is out,
 * and ws's socket 'close' handler then ends it again.
 */
describe('closeAfterCloseHandshake', { timeout: 10_000 }, () => {
  it('closes the socket after a close handshake, without ending the finished receiver again', async () => {
    const { wss, client, server, socket } = await watchedConnection();
    const endOfFinished = new Map<unknown, number>();
    const end = Writable.prototype.end;
    Writable.prototype.end = function (this: Writable, ...args: unknown[]) {
      if (this.writableFinished) endOfFinished.set(this, (endOfFinished.get(this) ?? 0) + 1);
      return (end as (...a: unknown[]) => Writable).apply(this, args);
    } as typeof end;
    try {
      // Runs right after the shortcut's own 'finish' listener: the socket must be closed by then.
      let destroyedAtFinish: boolean | null = null;
      socket.on('finish', () => (destroyedAtFinish = socket.destroyed));
      const receiver = receiverOf(server);
      assert.ok(receiver instanceof Writable, 'ws keeps its receiver as _receiver, a Writable');

      const serverClosed = once(server, 'close');
      client.close(1000, 'bye');
      const [code] = (await serverClosed) as [number];
      assert.equal(code, 1000);
      assert.equal(destroyedAtFinish, true, 'closed as soon as our FIN was out');
      assert.equal(endOfFinished.get(receiver), undefined, 'the finished receiver was ended again');
    } finally {
      Writable.prototype.end = end;
      wss.close();
    }
  });

  it('leaves a socket that ws ends without a close frame from the client to ws', async () => {
    const { wss, client, socket } = await watchedConnection(16);
    try {
      const finished = once(socket, 'finish');
      client.send('more than sixteen bytes');
      await finished;
      // ws sent 1009 and ended its side; the client's bytes may still be arriving, so ws keeps waiting.
      assert.equal(socket.destroyed, false);
      const [code] = (await once(client, 'close')) as [number];
      assert.equal(code, 1009);
    } finally {
      wss.close();
    }
  });
});
