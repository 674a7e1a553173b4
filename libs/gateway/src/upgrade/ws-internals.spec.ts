import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import { closeFrameReceived, receiverOf } from './ws-internals.js';

describe('ws internals (a failure here means an upgrade of ws moved them: see ws-internals.ts)', () => {
  it('the receiver is a Writable, and the close frame is recorded when it arrives', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(wss, 'listening');
    const accepted = once(wss, 'connection') as Promise<[WebSocket]>;
    const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`);
    const [[server]] = await Promise.all([accepted, once(client, 'open')]);
    try {
      assert.ok(receiverOf(server) instanceof Writable, 'ws keeps its receiver as _receiver, a Writable');
      assert.equal(closeFrameReceived(server), false);
      const closing = once(server, 'close');
      client.close(1000, 'bye');
      await closing;
      assert.equal(closeFrameReceived(server), true, 'ws sets _closeFrameReceived at the close frame');
    } finally {
      client.terminate();
      wss.close();
    }
  });
});
