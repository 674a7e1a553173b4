import assert from 'node:assert/strict';
import { type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { nextMessage, opened } from './support/ws-helpers.js';

describe('permessage-deflate per endpoint (endpoints[].perMessageDeflate)', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({
      endpoints: [
        // echo.v1 asks for compression itself; bin.v1 does not.
        { path: '/echo-module', subprotocols: ['echo.v1'] },
        { path: '/echo-off', subprotocols: ['echo.v1'], perMessageDeflate: false },
        {
          path: '/bin-on',
          subprotocols: ['bin.v1'],
          perMessageDeflate: {
            serverMaxWindowBits: 10,
            serverNoContextTakeover: true,
            threshold: 0,
            memLevel: 4,
          },
        },
      ],
    });
  });
  after(() => broker.close());

  /** The socket and the Sec-WebSocket-Extensions of its 101 ('' when none). */
  async function open(path: string, protocol: string): Promise<{ ws: WebSocket; agreed: string }> {
    const ws = new WebSocket(`${broker.url}${path}`, protocol, { perMessageDeflate: true });
    let agreed = '';
    ws.once('upgrade', (res) => (agreed = String(res.headers['sec-websocket-extensions'] ?? '')));
    await opened(ws);
    return { ws, agreed };
  }

  it('unset: the module decides (echo.v1 compresses)', async () => {
    const { ws, agreed } = await open('/echo-module', 'echo.v1');
    assert.match(agreed, /^permessage-deflate/);
    ws.close();
  });

  it('false: forbidden on this endpoint though the module wants it', async () => {
    const { ws, agreed } = await open('/echo-off', 'echo.v1');
    assert.equal(agreed, '');
    ws.send('plain');
    assert.equal(await nextMessage(ws), 'plain');
    ws.close();
  });

  it('an object: enabled for a module that does not ask, with the negotiated parameters, and it compresses', async () => {
    const { ws, agreed } = await open('/bin-on', 'bin.v1');
    assert.match(agreed, /^permessage-deflate/);
    assert.match(agreed, /server_max_window_bits=10/);
    assert.match(agreed, /server_no_context_takeover/);
    const socket = (ws as unknown as { _socket: Socket })._socket;
    const before = socket.bytesRead;
    const echoed = new Promise<Buffer>((resolve) => ws.once('message', (data: Buffer) => resolve(data)));
    ws.send(Buffer.alloc(1000, 0x61), { binary: true });
    assert.equal((await echoed).length, 1000);
    assert.ok(socket.bytesRead - before < 100, `${socket.bytesRead - before} bytes on the wire for 1000`);
    ws.close();
  });

  it('bad settings stop the boot naming the key', async () => {
    await assert.rejects(
      startTestBroker({
        endpoints: [
          { path: '/x', subprotocols: ['echo.v1'], perMessageDeflate: { serverMaxWindowBits: 20 } },
        ],
      }),
      /endpoints\.0\.perMessageDeflate/,
    );
  });
});
