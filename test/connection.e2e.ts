import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import WebSocket from 'ws';
import { ConnectionRegistry } from '#broker/gateway';
import { upgradeRequest, rawExchange } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { closed, nextMessage, opened, waitFor } from './support/ws-helpers.js';

describe('connections after the 101', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker({
      endpoints: [
        { path: '/bin', subprotocols: ['bin.v1'] },
        { path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', outboundBufferCap: 256 * 1024 },
        { path: '/buggy', subprotocols: ['buggy.v1'] },
        {
          path: '/limited',
          subprotocols: ['slowcheck.v1'],
          defaultModule: 'slowcheck.v1',
          maxConnections: 3,
          auth: { mode: 'optional', carriers: ['query'] },
        },
        { path: '/beat', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', pingIntervalMs: 100 },
      ],
    });
  });
  after(() => broker.close());

  /** Writes an upgrade request and `pings` masked pings in one write; what came back, and whether the broker closed. */
  async function pingsBehindUpgrade(pings: number): Promise<{ text: string; closed: boolean }> {
    const socket = connect(broker.port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let ended = false;
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('close', () => (ended = true));
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    const ping = Buffer.from([0x89, 0x80, 1, 2, 3, 4]);
    socket.write(
      Buffer.concat([
        Buffer.from(upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' })),
        ...Array.from({ length: pings }, () => ping),
      ]),
    );
    await waitFor(() => received.length >= 129 + 2 * Math.min(pings, 256) || ended);
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    return { text: received.toString('latin1'), closed: ended };
  }

  it('pings right behind the upgrade: the 101 first, then a pong for each, up to 256 in 10 s', async () => {
    const { text, closed: cut } = await pingsBehindUpgrade(100);
    assert.match(text, /^HTTP\/1\.1 101 /);
    const frames = text.slice(text.indexOf('\r\n\r\n') + 4);
    assert.equal(frames, '\x8a\x00'.repeat(100), 'a pong for each ping');
    assert.equal(cut, false);
  });

  it('a ping flood past 256 in 10 s: the 101, the pongs, then close 1008 with a reason', async () => {
    const { text } = await pingsBehindUpgrade(300);
    assert.match(text, /^HTTP\/1\.1 101 /);
    const frames = text.slice(text.indexOf('\r\n\r\n') + 4);
    assert.ok(frames.startsWith('\x8a\x00'.repeat(256)));
    const close = Buffer.from(frames.slice(512), 'latin1');
    assert.equal(close[0], 0x88, 'a close frame');
    assert.equal(close.readUInt16BE(2), 1008);
    assert.match(close.subarray(4).toString('utf8'), /^Too many pings/);
  });

  it("a message over the module's maxPayload closes 1009", async () => {
    const ws = new WebSocket(`${broker.url}/bin`, 'bin.v1');
    await opened(ws);
    ws.send(Buffer.alloc(2048));
    assert.equal((await closed(ws)).code, 1009);
  });

  it('a text frame to a binary-only module closes 1003 with a reason', async () => {
    const ws = new WebSocket(`${broker.url}/bin`, 'bin.v1');
    await opened(ws);
    ws.send(Buffer.from([1, 2, 3]));
    assert.deepEqual([...Buffer.from(await nextMessage(ws))], [1, 2, 3]);
    ws.send('text');
    const { code, reason } = await closed(ws);
    assert.equal(code, 1003);
    assert.match(reason, /text messages are not accepted/);
  });

  it('a client that stops reading is cut off at the outbound buffer cap (1008), others untouched', async () => {
    const reader = new WebSocket(`${broker.url}/echo`);
    await opened(reader);
    const stalled = new WebSocket(`${broker.url}/echo`);
    await opened(stalled);
    const socket = (stalled as unknown as { _socket: import('node:net').Socket })._socket;
    socket.pause();
    stalled.send('flood:400');
    await waitFor(() => broker.logText().includes('outbound buffer limit exceeded, closing 1008'), 5000);
    reader.send('alive');
    assert.equal(await nextMessage(reader), 'alive');
    reader.close();
    stalled.terminate();
  });

  it('an open connection does not keep its upgrade request (headers, token) reachable', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const server = broker.app.getHttpServer() as Server;
    let request: WeakRef<IncomingMessage> | undefined;
    const capture = (req: IncomingMessage): void => {
      request = new WeakRef(req);
    };
    server.prependListener('upgrade', capture);
    const ws = new WebSocket(`${broker.url}/echo`);
    await opened(ws);
    server.removeListener('upgrade', capture);
    ws.send('still open');
    assert.equal(await nextMessage(ws), 'still open');
    for (let i = 0; i < 10 && request?.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    assert.ok(request !== undefined, 'the upgrade was seen');
    assert.equal(request.deref(), undefined, 'the IncomingMessage of the upgrade is still reachable');
    ws.close();
    await closed(ws);
  });

  it('a peer that never answers pings is terminated by the heartbeat', async () => {
    const socket = connect(broker.port, '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1'))); // reads pings, never answers
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(upgradeRequest('/beat'));
    await gone;
    assert.match(received, /^HTTP\/1\.1 101 /);
    assert.ok(received.includes('\x89'), 'a ping frame was sent before the termination');
  });

  it('a module that throws is contained: that connection closes 1011, the broker and others go on', async () => {
    const bystander = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    await opened(bystander);
    const victim = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    await opened(victim);
    victim.send('boom');
    assert.equal((await closed(victim)).code, 1011);
    bystander.send('fine');
    assert.equal(await nextMessage(bystander), 'fine');
    bystander.close();
  });

  it('an async handler that rejects and a close handler that throws are contained too (1011)', async () => {
    const bystander = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    await opened(bystander);
    const victim = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    await opened(victim);
    victim.send('async-boom');
    assert.deepEqual(await closed(victim), { code: 1011, reason: 'internal error' });
    bystander.send('still here');
    assert.equal(await nextMessage(bystander), 'still here');
    bystander.close();
    await closed(bystander);
    assert.match(broker.logText(), /async module bug/);
  });

  it('a burst of messages sent in one tick arrives whole and in order, text and binary kept apart', async () => {
    const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1');
    await opened(ws);
    const received: string[] = [];
    const all = new Promise<void>((resolve) =>
      ws.on('message', (data: Buffer, isBinary) => {
        received.push(`${isBinary ? 'bin' : 'text'}:${data.toString()}`);
        if (received.length === 500) resolve();
      }),
    );
    ws.send('burst:500');
    await all;
    assert.deepEqual(
      received,
      Array.from({ length: 500 }, (_, i) => (i % 2 === 0 ? `text:m${i}` : `bin:b${i}`)),
    );
    ws.close();
  });

  it('concurrent handshakes cannot overshoot a connection limit', async () => {
    const sockets = Array.from({ length: 12 }, () => new WebSocket(`${broker.url}/limited`));
    const outcomes = await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<string>((resolve) => {
            ws.once('open', () => resolve('open'));
            ws.once('unexpected-response', (_req, res) => resolve(String(res.statusCode)));
            ws.once('error', () => resolve('error'));
          }),
      ),
    );
    assert.equal(outcomes.filter((o) => o === 'open').length, 3, outcomes.join(','));
    assert.equal(outcomes.filter((o) => o === '503').length, 9, outcomes.join(','));
    for (const ws of sockets) ws.terminate();
  });

  it('slots come back when connections close and when clients leave during the handshake', async () => {
    const registry = broker.app.get(ConnectionRegistry);
    const openAll = (n: number): Promise<WebSocket[]> =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const ws = new WebSocket(`${broker.url}/limited`);
          await opened(ws);
          return ws;
        }),
      );
    for (const ws of await openAll(3)) {
      ws.close();
      await closed(ws);
    }
    // Each client leaves while its slot is held for the module's slow check: reset, or half-closed.
    for (const leave of ['reset', 'end', 'reset', 'end']) {
      await waitFor(() => registry.total() === 0);
      const socket = connect(broker.port, '127.0.0.1');
      socket.on('error', () => undefined);
      const gone = new Promise((resolve) => socket.once('close', resolve));
      socket.write(upgradeRequest('/limited'));
      await waitFor(() => registry.total() === 1);
      if (leave === 'reset') socket.resetAndDestroy();
      else socket.end();
      await gone;
    }
    await waitFor(() => registry.total() === 0);
    for (const ws of await openAll(3)) ws.terminate();
  });

  it('after the close handshake the broker closes the TCP connection without waiting for the client', async () => {
    const registry = broker.app.get(ConnectionRegistry);
    await waitFor(() => registry.total() === 0);
    // A client that sends its close frame and then never ends its side of the TCP connection.
    const socket = connect({ port: broker.port, host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const serverEnded = new Promise((resolve) => socket.once('end', resolve));
    socket.write(upgradeRequest('/echo'));
    await waitFor(() => Buffer.concat(received).includes('\r\n\r\n'));
    assert.match(Buffer.concat(received).toString('latin1'), /^HTTP\/1\.1 101 /);
    // A masked close frame, code 1000, with a zero mask.
    socket.write(Buffer.from([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]));
    await serverEnded;
    const frames = Buffer.concat(received).subarray(Buffer.concat(received).indexOf('\r\n\r\n') + 4);
    assert.deepEqual([...frames.subarray(0, 4)], [0x88, 0x02, 0x03, 0xe8], 'the close frame came back');
    // ws would hold a half-closed connection for its 30 s close timeout; the slot is free at once.
    await waitFor(() => registry.total() === 0, 2000);
    socket.destroy();
  });

  it('a client whose frame is over maxPayload still gets what was queued for it and the 1009, not a reset', async () => {
    // It asks for 128 KiB and, before reading any of it, sends a 16 MiB frame (echo.v1 takes 1 MiB). ws closes
    // without the client's close frame; the client is still sending, so the broker must not reset.
    const socket = connect(broker.port, '127.0.0.1');
    const errors: string[] = [];
    socket.on('error', (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    const gone = new Promise((resolve) => socket.once('close', resolve));
    socket.write(upgradeRequest('/echo'));
    await waitFor(() => Buffer.concat(received).includes('\r\n\r\n'));
    socket.pause();
    const masked = (opcode: number, payload: Buffer): Buffer =>
      Buffer.concat([Buffer.from([0x80 | opcode, 0x80 | payload.length]), Buffer.alloc(4), payload]);
    socket.write(masked(1, Buffer.from('flood:2')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const size = 16 * 1024 * 1024;
    const header = Buffer.alloc(14);
    header[0] = 0x82;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(BigInt(size), 2);
    socket.write(Buffer.concat([header, Buffer.alloc(size)]));
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.resume();
    await gone;
    const all = Buffer.concat(received);
    const frames = all.subarray(all.indexOf('\r\n\r\n') + 4);
    assert.deepEqual(errors, [], 'no reset');
    assert.equal(frames.length, 2 * (10 + 65536) + 4, 'both 64 KiB messages and the close frame');
    assert.deepEqual([...frames.subarray(-4)], [0x88, 0x02, 0x03, 0xf1], 'close 1009');
  });

  it('a ws client (which answers pings) survives several heartbeat intervals', async () => {
    const ws = new WebSocket(`${broker.url}/beat`);
    await opened(ws);
    let pings = 0;
    ws.on('ping', () => pings++);
    await waitFor(() => pings >= 3);
    ws.send('still open');
    assert.equal(await nextMessage(ws), 'still open');
    ws.close();
  });

  it('open connections, messages and bytes are counted per endpoint and subprotocol in /metrics', async () => {
    const scrape = async (): Promise<string> =>
      (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    const value = (text: string, metric: string, direction: string): number =>
      Number(
        new RegExp(
          `${metric}\\{direction="${direction}",endpoint="/bin",subprotocol="bin.v1"\\} (\\d+)`,
        ).exec(text)?.[1] ?? 0,
      );
    const before = await scrape();
    const ws = new WebSocket(`${broker.url}/bin`, 'bin.v1');
    await opened(ws);
    ws.send(Buffer.alloc(10));
    await nextMessage(ws);
    const middle = await scrape();
    assert.match(middle, /broker_connections\{endpoint="\/bin",subprotocol="bin.v1"\} 1/);
    let echoed = 0;
    ws.on('message', () => echoed++);
    ws.send(Buffer.alloc(20));
    ws.send(Buffer.alloc(30));
    await waitFor(() => echoed === 2);
    const after = await scrape();
    // Counts accumulate across scrapes: each scrape adds what happened since the one before.
    assert.equal(
      value(middle, 'broker_messages_total', 'in') - value(before, 'broker_messages_total', 'in'),
      1,
    );
    assert.equal(
      value(after, 'broker_messages_total', 'in') - value(middle, 'broker_messages_total', 'in'),
      2,
    );
    assert.equal(
      value(after, 'broker_messages_total', 'out') - value(before, 'broker_messages_total', 'out'),
      3,
    );
    assert.equal(
      value(after, 'broker_message_bytes_total', 'in') - value(before, 'broker_message_bytes_total', 'in'),
      60,
    );
    assert.equal(
      value(after, 'broker_message_bytes_total', 'out') - value(middle, 'broker_message_bytes_total', 'out'),
      50,
    );
    const accepted = (text: string): number =>
      Number(
        /broker_handshakes_total\{outcome="accepted",status="101",endpoint="\/bin"\} (\d+)/.exec(text)?.[1] ??
          0,
      );
    assert.equal(accepted(middle) - accepted(before), 1, 'the handshake is counted once');
    assert.equal(accepted(after), accepted(middle), 'and not again at the next scrape');
    ws.close();
    await waitFor(async () =>
      /broker_connections\{endpoint="\/bin",subprotocol="bin.v1"\} 0/.test(await scrape()),
    );
  });

  it('health and readiness answer', async () => {
    const health = await fetch(`http://127.0.0.1:${broker.port}/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    assert.equal((await fetch(`http://127.0.0.1:${broker.port}/health/ready`)).status, 200);
  });
});

describe('graceful shutdown', () => {
  it('a module whose goodbye throws does not stop the drain', async () => {
    const broker = await startTestBroker({ endpoints: [{ path: '/buggy', subprotocols: ['buggy.v1'] }] });
    const first = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    const second = new WebSocket(`${broker.url}/buggy`, 'buggy.v1');
    await Promise.all([opened(first), opened(second)]);
    const closes = Promise.all([closed(first), closed(second)]);
    await broker.close();
    assert.deepEqual(
      (await closes).map((c) => c.code),
      [1001, 1001],
    );
  });

  it('modules say goodbye, clients get 1001, new upgrades get 503 while draining', async () => {
    const broker = await startTestBroker({
      shutdown: { drainTimeoutMs: 1500 },
      endpoints: [{ path: '/polite', subprotocols: ['polite.v1'] }],
    });
    const ws = new WebSocket(`${broker.url}/polite`, 'polite.v1');
    await opened(ws);
    const goodbye = nextMessage(ws);
    const closing = closed(ws);
    // A peer that never completes the close handshake keeps the drain waiting.
    const stubborn = connect(broker.port, '127.0.0.1');
    stubborn.on('error', () => undefined);
    stubborn.write(upgradeRequest('/polite', { 'Sec-WebSocket-Protocol': 'polite.v1' }));
    await waitFor(async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
      return /broker_connections\{endpoint="\/polite",subprotocol="polite.v1"\} 2/.test(metrics);
    });
    stubborn.pause();
    const stopping = broker.close();
    assert.equal(await goodbye, 'goodbye');
    const { code, reason } = await closing;
    assert.equal(code, 1001);
    assert.match(reason, /shutting down/);
    const during = await rawExchange(
      broker.port,
      upgradeRequest('/polite', { 'Sec-WebSocket-Protocol': 'polite.v1' }),
    );
    assert.equal(during.status, 503);
    assert.ok(during.headers['retry-after']);
    await stopping;
    stubborn.destroy();
  });
});
