import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { runHandshakeLoad } from './handshake-load.js';
import { prepareUpgrades } from './upgrade-request.js';

async function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function load(port: number) {
  const upgrades = prepareUpgrades(
    { port, path: '/chat', origin: 'https://app.example.com', subprotocol: 'chat.v1' },
    ['a.b.c'],
  );
  return runHandshakeLoad({
    port,
    upgrades,
    subprotocol: 'chat.v1',
    concurrency: 2,
    warmupMs: 0,
    durationMs: 200,
    timeoutMs: 2000,
  });
}

describe('runHandshakeLoad', () => {
  it('counts correct handshakes against a ws server, with no errors', async () => {
    const server = createServer();
    const wss = new WebSocketServer({ server, handleProtocols: () => 'chat.v1' });
    wss.on('connection', (ws) => ws.send('{"type":"welcome"}'));
    try {
      const result = await load(await listen(server));
      assert.deepEqual([...result.errors], []);
      assert.ok(result.handshakes > 0);
      assert.equal(result.latenciesMs.length, result.handshakes);
    } finally {
      wss.close();
      server.close();
    }
  });

  it('counts refusals as errors, never as handshakes', async () => {
    const server = createServer();
    server.on('upgrade', (_req, socket) =>
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n'),
    );
    try {
      const result = await load(await listen(server));
      assert.equal(result.handshakes, 0);
      assert.ok((result.errors.get('HTTP 401 Unauthorized') ?? 0) > 0);
      assert.deepEqual([...result.errors.keys()], ['HTTP 401 Unauthorized']);
    } finally {
      server.close();
    }
  });
});
