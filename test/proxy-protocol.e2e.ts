import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import {
  Command,
  IPv4Address,
  IPv4ProxyAddress,
  IPv6Address,
  IPv6ProxyAddress,
  TransportProtocol,
  V2ProxyProtocol,
} from 'proxy-protocol-js';
import { startHaproxy, type RunningProxy } from './support/proxies.js';
import { upgradeRequest } from './support/raw-http.js';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { opened } from './support/ws-helpers.js';
import WebSocket from 'ws';

/** Writes `parts` one by one (`gapMs` apart) from `from`; what came back, and whether the server closed. */
function exchange(
  port: number,
  parts: readonly (string | Buffer)[],
  options: { from?: string; gapMs?: number; waitMs?: number } = {},
): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress: options.from ?? '127.0.0.1' });
    let text = '';
    let closed = false;
    const timer = setTimeout(() => finish(), options.waitMs ?? 1500);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (text.includes('\r\n\r\n')) finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', () => undefined);
    socket.once('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
      }
    });
  });
}

function v2(source: IPv4ProxyAddress | IPv6ProxyAddress, command = Command.PROXY): Buffer {
  return Buffer.from(new V2ProxyProtocol(command, TransportProtocol.STREAM, source).build());
}

const UPGRADE = upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' });

/** A v2 IPv4 header followed by a TLV whose length (16) runs past the header's end (3 bytes of it). */
function truncatedTlv(): Buffer {
  const header = v2(
    new IPv4ProxyAddress(
      IPv4Address.createFrom([203, 0, 113, 9]),
      5555,
      IPv4Address.createFrom([127, 0, 0, 1]),
      80,
    ),
  );
  const tlv = Buffer.from([0x05, 0x00, 0x10]);
  const out = Buffer.concat([header, tlv]);
  out.writeUInt16BE(header.readUInt16BE(14) + tlv.length, 14);
  return out;
}

describe('PROXY protocol on the listener (http.proxyProtocol, trusted 127.0.0.1)', () => {
  let broker: TestBroker;
  const clients = () =>
    broker
      .logLines()
      .filter((l) => l['status'] === 101)
      .map((l) => l['client']);

  before(async () => {
    broker = await startTestBroker({
      http: { trustedProxies: ['127.0.0.1'], proxyProtocol: true, headersTimeoutMs: 500 },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
  });
  after(() => broker.close());

  it('a v1 header names the client: the handshake and its log line carry its address', async () => {
    const { text } = await exchange(broker.port, [`PROXY TCP4 203.0.113.7 127.0.0.1 5555 80\r\n${UPGRADE}`]);
    assert.match(text, /^HTTP\/1\.1 101 /);
    assert.ok(clients().includes('203.0.113.7'));
  });

  it('a v2 header, IPv4 and IPv6, even when it arrives a few bytes at a time', async () => {
    const four = v2(
      new IPv4ProxyAddress(
        IPv4Address.createFrom([198, 51, 100, 23]),
        4000,
        IPv4Address.createFrom([127, 0, 0, 1]),
        80,
      ),
    );
    const bytes = [...Buffer.concat([four, Buffer.from(UPGRADE)])].map((b) => Buffer.from([b]));
    const split = await exchange(broker.port, bytes.slice(0, 40).concat([Buffer.concat(bytes.slice(40))]), {
      gapMs: 1,
    });
    assert.match(split.text, /^HTTP\/1\.1 101 /);
    const sixAddress = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42];
    const six = v2(
      new IPv6ProxyAddress(
        IPv6Address.createFrom(sixAddress),
        4000,
        IPv6Address.createFrom(new Array(15).fill(0).concat([1])),
        80,
      ),
    );
    const { text } = await exchange(broker.port, [Buffer.concat([six, Buffer.from(UPGRADE)])]);
    assert.match(text, /^HTTP\/1\.1 101 /);
    assert.ok(clients().includes('198.51.100.23'));
    assert.ok(clients().includes('2001:db8::42'));
  });

  it('a v2 LOCAL header (the proxy’s own health check) keeps the peer’s address', async () => {
    const local = v2(
      new IPv4ProxyAddress(IPv4Address.createFrom([0, 0, 0, 0]), 0, IPv4Address.createFrom([0, 0, 0, 0]), 0),
      Command.LOCAL,
    );
    const { text } = await exchange(broker.port, [
      Buffer.concat([local, Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\n\r\n')]),
    ]);
    assert.match(text, /^HTTP\/1\.1 200 /);
  });

  it('no header: served as it is, with the peer’s own address', async () => {
    const { text } = await exchange(broker.port, ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n']);
    assert.match(text, /^HTTP\/1\.1 200 /);
  });

  it('closed before anything is served: a header from an untrusted peer, malformed, over-long, truncated or late', async () => {
    const cases: [string, readonly (string | Buffer)[], { from?: string; waitMs?: number }][] = [
      ['untrusted peer', [`PROXY TCP4 203.0.113.8 127.0.0.1 5555 80\r\n${UPGRADE}`], { from: '127.0.0.2' }],
      ['bad address', [`PROXY TCP4 999.1.1.1 127.0.0.1 5555 80\r\n${UPGRADE}`], {}],
      ['garbage v1', [`PROXY PIGEON x y z w\r\n${UPGRADE}`], {}],
      ['over-long v1', [`PROXY TCP4 ${'1'.repeat(200)}`], {}],
      [
        'bad v2 family',
        [
          Buffer.concat([
            v2(
              new IPv4ProxyAddress(
                IPv4Address.createFrom([1, 2, 3, 4]),
                1,
                IPv4Address.createFrom([1, 2, 3, 4]),
                1,
              ),
            ).subarray(0, 13),
            Buffer.from([0x99, 0, 12]),
            Buffer.alloc(12),
          ]),
        ],
        {},
      ],
      [
        'v2 over 1040 bytes',
        [
          Buffer.concat([
            Buffer.from([
              0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, 0xff, 0xff,
            ]),
          ]),
        ],
        {},
      ],
      ['v1 TCP4 naming IPv6 addresses', [`PROXY TCP4 2001:db8::1 2001:db8::2 5555 80\r\n${UPGRADE}`], {}],
      ['v1 TCP6 naming IPv4 addresses', [`PROXY TCP6 203.0.113.8 127.0.0.1 5555 80\r\n${UPGRADE}`], {}],
      ['v1 port 99999', [`PROXY TCP4 203.0.113.8 127.0.0.1 99999 80\r\n${UPGRADE}`], {}],
      ['v1 port with a leading zero', [`PROXY TCP4 203.0.113.8 127.0.0.1 05555 80\r\n${UPGRADE}`], {}],
      ['v2 TLV running past the header', [Buffer.concat([truncatedTlv(), Buffer.from(UPGRADE)])], {}],
      ['truncated, then silence', ['PROXY TCP4 203.0.113.9 127'], { waitMs: 3000 }],
      ['nothing at all', [], { waitMs: 3000 }],
    ];
    for (const [what, parts, options] of cases) {
      const { text, closed } = await exchange(broker.port, parts, options);
      assert.equal(text, '', `${what}: nothing served`);
      assert.equal(closed, true, `${what}: closed`);
    }
    const refusals = broker.logLines().filter((l) => l['msg'] === 'connection refused before its request');
    assert.ok(refusals.some((l) => l['client'] === '127.0.0.2' && /not trusted/.test(String(l['reason']))));
    assert.ok(refusals.some((l) => /did not arrive in time/.test(String(l['reason']))));
    // Other clients are untouched.
    const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1');
    await opened(ws);
    ws.close();
  });
});

describe('PROXY protocol before TLS (a TCP load balancer in front of a TLS listener)', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({
      tls: selfSignedCertificate(),
      http: { trustedProxies: ['127.0.0.1'], proxyProtocol: true, headersTimeoutMs: 500 },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
  });
  after(() => broker.close());

  /** A TCP connection that sends `header` and then starts TLS on the same bytes, as a TCP-mode proxy does. */
  const afterHeader =
    (header: string, from = '127.0.0.1') =>
    (): Socket => {
      const raw = connect({ port: broker.port, host: '127.0.0.1', localAddress: from });
      raw.write(header);
      return tlsConnect({ socket: raw, rejectUnauthorized: false }) as unknown as Socket;
    };

  it('the header names the client of a wss handshake, and the TLS that follows it is the broker’s', async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${broker.port}/echo`, 'echo.v1', {
      createConnection: afterHeader('PROXY TCP4 203.0.113.70 127.0.0.1 5555 443\r\n'),
    });
    await opened(ws);
    ws.send('over TLS');
    const [echoed] = (await once(ws, 'message')) as [Buffer];
    assert.equal(echoed.toString(), 'over TLS');
    ws.close();
    const clients = broker
      .logLines()
      .filter((l) => l['status'] === 101)
      .map((l) => l['client']);
    assert.deepEqual(clients, ['203.0.113.70']);
  });

  it('an untrusted peer’s header is refused before TLS starts; TLS without a header is served as it is', async () => {
    const refused = new WebSocket(`wss://127.0.0.1:${broker.port}/echo`, 'echo.v1', {
      createConnection: afterHeader('PROXY TCP4 203.0.113.71 127.0.0.1 5555 443\r\n', '127.0.0.3'),
    });
    const [err] = (await once(refused, 'error')) as [Error];
    assert.match(err.message, /socket hang up|ECONNRESET|disconnected/);
    const plain = new WebSocket(`wss://127.0.0.1:${broker.port}/echo`, 'echo.v1', {
      rejectUnauthorized: false,
    });
    await opened(plain);
    plain.close();
  });
});

describe('behind HAProxy sending PROXY v2 (send-proxy-v2)', () => {
  let broker: TestBroker;
  let proxy: RunningProxy;
  before(async () => {
    broker = await startTestBroker({
      http: { trustedProxies: ['127.0.0.1'], proxyProtocol: true },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
    proxy = await startHaproxy({ upstreams: [broker.port], sendProxy: true });
  });
  after(async () => {
    await proxy?.stop();
    await broker?.close();
  });

  it('the client’s own address reaches the broker through the PROXY header', async () => {
    const ws = new WebSocket(`${proxy.ws}/echo`, 'echo.v1', { localAddress: '127.0.44.44' });
    await opened(ws);
    ws.close();
    const clients = broker
      .logLines()
      .filter((l) => l['status'] === 101)
      .map((l) => l['client']);
    assert.deepEqual(clients, ['127.0.44.44']);
  });
});
