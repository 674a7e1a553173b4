import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect as netConnect, type Socket } from 'node:net';
import { once } from 'node:events';
import {
  connect as http2Connect,
  constants,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
} from 'node:http2';
import { after, before, describe, it } from 'node:test';
import mqtt from 'mqtt';
import WebSocket from 'ws';
import { http2WebSocket } from './support/http2-websocket.js';
import { rawExchange } from './support/raw-http.js';
import { selfSignedCertificate } from './support/self-signed.js';
import { startDefaultBroker, startTestBroker, type TestBroker } from './support/test-broker.js';
import { closed, opened, refusedStatus, waitFor } from './support/ws-helpers.js';

/** One request on an HTTP/2 session: status, headers and body. */
async function h2Request(
  session: ClientHttp2Session,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const stream = session.request(headers);
  stream.end();
  const [response] = (await once(stream, 'response')) as [IncomingHttpHeaders];
  let body = '';
  for await (const chunk of stream) body += String(chunk);
  return { status: Number(response[':status']), headers: response, body };
}

async function session(url: string): Promise<ClientHttp2Session> {
  const s = http2Connect(url, { rejectUnauthorized: false });
  s.on('error', () => undefined);
  await once(s, 'remoteSettings');
  return s;
}

/** A metric's total over its labels, read over HTTP/2 (through the bridge to the application). */
async function metric(h2: ClientHttp2Session, name: string): Promise<number> {
  const { body } = await h2Request(h2, { ':path': '/metrics' });
  return body
    .split('\n')
    .filter((l) => l.startsWith(name))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

async function echo(ws: WebSocket, text: string): Promise<string> {
  ws.send(text);
  const [data] = (await once(ws, 'message')) as [Buffer];
  return data.toString();
}

const ENDPOINTS = [
  { path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' },
  { path: '/guarded', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', origins: ['https://app.example'] },
];

describe('WebSocket over HTTP/2 in cleartext (h2c with prior knowledge, http.http2)', () => {
  let broker: TestBroker;
  let h2: ClientHttp2Session;
  before(async () => {
    broker = await startTestBroker({
      http: { http2: true },
      limits: { maxConnectionsPerAddress: 30 },
      endpoints: ENDPOINTS,
    });
    h2 = await session(`http://127.0.0.1:${broker.port}`);
  });
  after(async () => {
    h2?.close();
    await broker?.close();
  });

  it('advertises SETTINGS_ENABLE_CONNECT_PROTOCOL; many WebSockets share one connection', async () => {
    assert.equal(h2.remoteSettings.enableConnectProtocol, true);
    const before = await metric(h2, 'broker_http2_websockets_total');
    const sockets = Array.from({ length: 20 }, () =>
      http2WebSocket(h2, `ws://127.0.0.1:${broker.port}/echo`, 'echo.v1'),
    );
    await Promise.all(sockets.map(opened));
    const echoes = await Promise.all(sockets.map((ws, i) => echo(ws, `message ${i}`)));
    assert.deepEqual(
      echoes,
      sockets.map((_, i) => `message ${i}`),
    );
    assert.ok(sockets.every((ws) => ws.protocol === 'echo.v1'));
    assert.equal((await metric(h2, 'broker_http2_websockets_total')) - before, 20);
    const lines = broker.logLines().filter((l) => l['reason'] === 'accepted over HTTP/2');
    assert.ok(lines.length >= 20 && lines.every((l) => l['status'] === 200 && l['client'] === '127.0.0.1'));
    for (const ws of sockets) ws.close(1000, 'done');
    const closes = await Promise.all(sockets.map((ws) => closed(ws)));
    assert.ok(closes.every((c) => c.code === 1000));
  });

  it('permessage-deflate is negotiated over HTTP/2 as over HTTP/1.1', async () => {
    const ws = http2WebSocket(h2, `ws://127.0.0.1:${broker.port}/echo`, 'echo.v1', {
      perMessageDeflate: true,
    });
    await opened(ws);
    assert.match(ws.extensions, /permessage-deflate/);
    assert.equal(await echo(ws, 'x'.repeat(10_000)), 'x'.repeat(10_000));
    ws.close();
  });

  it('every other request on the connection is answered by the application (probes, admin API, an endpoint’s plain page)', async () => {
    const health = await h2Request(h2, { ':path': '/health' });
    assert.equal(health.status, 200);
    const admin = await h2Request(h2, { ':path': '/admin/v1/connections' });
    assert.equal(admin.status, 200);
    assert.ok(Array.isArray(JSON.parse(admin.body)));
    const plain = await h2Request(h2, { ':path': '/echo', accept: 'application/json' });
    assert.equal(plain.status, 200);
    assert.deepEqual(JSON.parse(plain.body).subprotocols, ['echo.v1']);
    const missing = await h2Request(h2, { ':path': '/no-such-page' });
    assert.equal(missing.status, 404);
  });

  it('refusals are the stream’s status and problem, and the connection stays: path, origin, version, :protocol, header size', async () => {
    const wsTo = (path: string, options: WebSocket.ClientOptions = {}) =>
      http2WebSocket(h2, `ws://127.0.0.1:${broker.port}${path}`, 'echo.v1', options);
    assert.equal(await refusedStatus(wsTo('/nowhere')), 404);
    assert.equal(await refusedStatus(wsTo('/guarded', { origin: 'https://evil.example' })), 403);
    const version = await h2Request(h2, {
      ':method': 'CONNECT',
      ':protocol': 'websocket',
      ':path': '/echo',
      'sec-websocket-version': '8',
    });
    assert.equal(version.status, 426);
    assert.equal(version.headers['sec-websocket-version'], '13');
    assert.equal(version.headers['upgrade'], undefined);
    const other = await h2Request(h2, {
      ':method': 'CONNECT',
      ':protocol': 'webtransport',
      ':path': '/echo',
    });
    assert.equal(other.status, 400);
    assert.match(JSON.parse(other.body).detail, /:protocol/);
    const garbage = await h2Request(h2, {
      ':method': 'CONNECT',
      ':protocol': 'websocket',
      ':path': '/echo%ZZ',
    });
    assert.equal(garbage.status, 404);
    // A header block over http.maxHeaderSize (16 KiB) resets its own stream only.
    const big = h2.request({
      ':method': 'CONNECT',
      ':protocol': 'websocket',
      ':path': '/echo',
      'x-big': 'a'.repeat(20_000),
    });
    big.on('error', () => undefined);
    await new Promise((resolve) => big.once('close', resolve));
    assert.equal(big.rstCode, constants.NGHTTP2_ENHANCE_YOUR_CALM);
    assert.equal(h2.destroyed, false);
    const ws = wsTo('/guarded', { origin: 'https://app.example' });
    await opened(ws);
    ws.close();
  });

  it('streams are bounded like connections: 1,000 at once on one connection, the per-address limit open and the rest 429', async () => {
    const many = await session(`http://127.0.0.1:${broker.port}`);
    const outcomes = await Promise.all(
      Array.from({ length: 1000 }, async () => {
        const ws = http2WebSocket(many, `ws://127.0.0.1:${broker.port}/echo`, 'echo.v1');
        return new Promise<string>((resolve) => {
          ws.once('open', () => resolve('open'));
          ws.once('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
          ws.once('error', (err) => resolve(err.message));
        }).then((outcome) => ({ ws, outcome }));
      }),
    );
    const open = outcomes.filter((o) => o.outcome === 'open');
    assert.equal(open.length, 30, JSON.stringify(outcomes.map((o) => o.outcome)));
    assert.ok(outcomes.filter((o) => o.outcome !== 'open').every((o) => o.outcome === '429'));
    for (const { ws } of outcomes) ws.terminate();
    many.destroy();
    await waitFor(async () => (await metric(h2, 'broker_connections')) === 0);
  });

  it('a stream reset mid-handshake gives its slot back; the connection and other clients carry on', async () => {
    for (let i = 0; i < 50; i++) {
      const stream = h2.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':path': '/echo' });
      stream.on('error', () => undefined);
      stream.close(constants.NGHTTP2_CANCEL);
    }
    await waitFor(async () => (await metric(h2, 'broker_connections')) === 0);
    // Every slot is free again: the per-address limit (30) of WebSockets still opens.
    const sockets = Array.from({ length: 30 }, () =>
      http2WebSocket(h2, `ws://127.0.0.1:${broker.port}/echo`, 'echo.v1'),
    );
    await Promise.all(sockets.map(opened));
    for (const ws of sockets) ws.terminate();
    const plain = new WebSocket(`ws://127.0.0.1:${broker.port}/echo`, 'echo.v1');
    await opened(plain);
    plain.close();
  });

  it('a connection that goes idle after each of many requests keeps one idle timer, not a listener per request', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 25; i++) assert.equal((await h2Request(h2, { ':path': '/health' })).status, 200);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
      [],
    );
  });

  it('HTTP/1.1 on the same listener is untouched', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${broker.port}/echo`, 'echo.v1');
    await opened(ws);
    assert.equal(await echo(ws, 'h1'), 'h1');
    ws.close();
    assert.equal((await fetch(`http://127.0.0.1:${broker.port}/health`)).status, 200);
  });
});

describe('WebSocket over HTTP/2 with TLS (ALPN h2): a real module', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startDefaultBroker({ tls: selfSignedCertificate(), http: { http2: true } });
  });
  after(() => broker?.close());

  it('MQTT.js publishes and subscribes over two WebSockets on one HTTP/2 connection', async () => {
    const h2 = await session(`https://127.0.0.1:${broker.port}`);
    const client = (clientId: string) =>
      mqtt.connect(`wss://127.0.0.1:${broker.port}/mqtt`, {
        clientId,
        reconnectPeriod: 0,
        createWebsocket: (url: string, protocols: string[]) => http2WebSocket(h2, url, protocols),
      } as mqtt.IClientOptions);
    const subscriber = client('h2-sub');
    const publisher = client('h2-pub');
    await Promise.all([once(subscriber as never, 'connect'), once(publisher as never, 'connect')]);
    await subscriber.subscribeAsync('h2/topic', { qos: 1 });
    await publisher.publishAsync('h2/topic', 'over one TCP connection', { qos: 1 });
    const [topic, payload] = (await once(subscriber as never, 'message')) as [string, Buffer];
    assert.equal(topic, 'h2/topic');
    assert.equal(payload.toString(), 'over one TCP connection');
    assert.equal(await metric(h2, 'broker_http2_websockets_total'), 2);
    await Promise.all([subscriber.endAsync(), publisher.endAsync()]);
    h2.close();
  });

  it('HTTP/1.1 clients (ALPN http/1.1) on the same TLS port are untouched', async () => {
    const ws = new WebSocket(`wss://127.0.0.1:${broker.port}/chat`, 'chat.v1', { rejectUnauthorized: false });
    await opened(ws);
    ws.close();
  });
});

/** `promise`, or a failure naming `what` once `ms` have passed. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} after ${ms} ms`)), ms)),
  ]);
}

/** Server-side sockets of `port` in CLOSE-WAIT: the client closed, the broker has not. */
function closeWaitSockets(port: number): number {
  const out = execFileSync('ss', ['-tnH', 'state', 'close-wait', `( sport = :${port} )`]).toString();
  return out.split('\n').filter((line) => line.trim() !== '').length;
}

describe('HTTP/2: streams that never finish, and clients that go away (http.requestTimeoutMs 1 s)', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({
      http: { http2: true, requestTimeoutMs: 1000, headersTimeoutMs: 1000 },
      endpoints: ENDPOINTS,
    });
  });
  after(() => broker?.close());

  it('rapid reset: a client resetting its streams at once gets GOAWAY ENHANCE_YOUR_CALM, and its address is refused at accept for a while; others go on', async () => {
    const flooder = '127.0.0.7';
    const h2 = http2Connect(`http://127.0.0.1:${broker.port}`, {
      createConnection: () => netConnect({ port: broker.port, host: '127.0.0.1', localAddress: flooder }),
    });
    h2.on('error', () => undefined);
    await once(h2, 'remoteSettings');
    const goaway = once(h2, 'goaway');
    for (let i = 0; i < 300 && !h2.closed && !h2.destroyed; i++) {
      const stream = h2.request({ ':path': '/health' });
      stream.on('error', () => undefined);
      stream.close(constants.NGHTTP2_CANCEL);
      // In batches, as the attack sends them: the server reads a batch per turn.
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    const [code] = (await within(goaway, 5000, 'no GOAWAY')) as [number];
    assert.equal(code, constants.NGHTTP2_ENHANCE_YOUR_CALM);
    const again = await rawExchange(
      broker.port,
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
      500,
      flooder,
    ).catch(() => null);
    assert.ok(again === null || again.raw === '', `served again at once: ${again?.raw.slice(0, 40)}`);
    const other = await session(`http://127.0.0.1:${broker.port}`);
    assert.equal((await h2Request(other, { ':path': '/health' })).status, 200);
    other.destroy();
  });

  it('a CONNECT without :protocol is refused at once (405), though its stream never ends', async () => {
    const h2 = await session(`http://127.0.0.1:${broker.port}`);
    const stream = h2.request(
      { ':method': 'CONNECT', ':authority': `127.0.0.1:${broker.port}` },
      { endStream: false },
    );
    stream.on('error', () => undefined);
    const [response] = (await within(once(stream, 'response'), 5000, 'no answer')) as [IncomingHttpHeaders];
    assert.equal(response[':status'], 405);
    h2.destroy();
  });

  it('a request whose body never ends is answered or reset within requestTimeoutMs, and the idle connection is closed', async () => {
    const h2 = await session(`http://127.0.0.1:${broker.port}`);
    const closedByServer = once(h2, 'close');
    const stream = h2.request({ ':path': '/health' }, { endStream: false });
    stream.on('error', () => undefined);
    stream.resume();
    await within(once(stream, 'close'), 10_000, 'the stream is still open');
    await within(closedByServer, 10_000, 'the idle connection is still open');
  });

  it('clients that go away with streams open leave no socket behind (no CLOSE-WAIT)', async () => {
    const sockets: Socket[] = [];
    const sessions = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const socket = netConnect(broker.port, '127.0.0.1');
        sockets.push(socket);
        const h2 = http2Connect(`http://127.0.0.1:${broker.port}`, { createConnection: () => socket });
        h2.on('error', () => undefined);
        await once(h2, 'remoteSettings');
        return h2;
      }),
    );
    for (const h2 of sessions) {
      h2.request({ ':method': 'CONNECT', ':authority': 'x' }, { endStream: false }).on(
        'error',
        () => undefined,
      );
      h2.request({ ':path': '/health' }, { endStream: false }).on('error', () => undefined);
    }
    // The client's socket ends (FIN) with its streams still open.
    for (const socket of sockets) socket.end();
    await waitFor(() => closeWaitSockets(broker.port) === 0, 10_000).catch(() => {
      throw new Error(`${closeWaitSockets(broker.port)} sockets still in CLOSE-WAIT after 10 s`);
    });
    for (const h2 of sessions) h2.destroy();
    // The broker still answers.
    const h2 = await session(`http://127.0.0.1:${broker.port}`);
    assert.equal((await h2Request(h2, { ':path': '/health' })).status, 200);
    h2.close();
  });
});
