import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { connect as tcpConnect, createServer as createTcpServer, Socket, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { selfSignedForSpecs } from '../self-signed.spec-support.js';
import { constructRequestsWith, refuseAtAccept, tcpSocketUnder } from './node-internals.js';

describe('Node internals (a failure here means a Node upgrade moved them: see node-internals.ts)', () => {
  it("a server's TLS socket keeps the TCP socket it wraps as _parent", async () => {
    const server = createServer(selfSignedForSpecs());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const accepted = once(server, 'secureConnection') as Promise<[TLSSocket]>;
    const client = connect({ port: (server.address() as AddressInfo).port, rejectUnauthorized: false });
    try {
      const [[tls]] = await Promise.all([accepted, once(client, 'secureConnect')]);
      const tcp = tcpSocketUnder(tls);
      assert.ok(tcp instanceof Socket, '_parent is a net.Socket');
      assert.equal(tcp.remotePort, client.localPort);
    } finally {
      client.destroy();
      server.close();
    }
  });

  it('a connection refused at accept is closed before Node makes a Socket of it; the others are served', async () => {
    const server = createTcpServer((socket) => socket.end('served'));
    const asked: string[] = [];
    let refusing = true;
    refuseAtAccept(server, (address) => {
      asked.push(address);
      return refusing;
    });
    let connections = 0;
    server.on('connection', () => connections++);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const read = async (): Promise<string> => {
      const client = tcpConnect(port, '127.0.0.1');
      client.on('error', () => undefined);
      let text = '';
      client.on('data', (chunk: Buffer) => (text += chunk.toString()));
      await once(client, 'close');
      return text;
    };
    try {
      assert.equal(await read(), '', 'the refused connection is closed unanswered');
      assert.equal(connections, 0, "no 'connection' event for it");
      refusing = false;
      assert.equal(await read(), 'served');
      assert.equal(connections, 1);
      assert.deepEqual(
        asked,
        ['127.0.0.1', '127.0.0.1'],
        "the peer's address, read from the accepted handle",
      );
    } finally {
      server.close();
    }
  });

  it("an HTTP server makes its requests and responses with the prototypes given, and they work as Node's", async () => {
    const request = Object.create(IncomingMessage.prototype) as IncomingMessage;
    const response = Object.create(ServerResponse.prototype) as ServerResponse;
    const server = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const born = Object.getPrototypeOf(req) === request && Object.getPrototypeOf(res) === response;
        res.setHeader('Content-Type', 'text/plain');
        res.end(
          `${String(born)} ${req.method ?? ''} ${req.url ?? ''} ${req.headers['x-test'] ?? ''} ${body}`,
        );
      });
    });
    assert.equal(constructRequestsWith(server, request, response), true);
    assert.equal(constructRequestsWith(server, request, response), false, 'a second call finds them changed');
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/path?q=1`, {
        method: 'POST',
        headers: { 'x-test': 'yes' },
        body: 'hello',
      });
      assert.equal(answer.headers.get('content-type'), 'text/plain');
      assert.equal(await answer.text(), 'true POST /path?q=1 yes hello');
    } finally {
      server.close();
    }
  });
});
