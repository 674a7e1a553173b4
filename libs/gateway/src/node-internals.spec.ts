import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Socket, type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { selfSignedForSpecs } from './self-signed.spec-support.js';
import { tcpSocketUnder } from './node-internals.js';

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
});
