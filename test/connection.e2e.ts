import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import WebSocket from 'ws';
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
        { path: '/beat', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', pingIntervalMs: 100 },
      ],
    });
  });
  after(() => broker.close());

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

  it('a peer that never answers pings is terminated by the heartbeat', async () => {
    const socket = connect(broker.port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.on('data', () => undefined); // reads the pings, never answers them
    const gone = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(upgradeRequest('/beat'));
    await gone;
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

  it('open connections are counted per endpoint and subprotocol in /metrics', async () => {
    const ws = new WebSocket(`${broker.url}/bin`, 'bin.v1');
    await opened(ws);
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    assert.match(metrics, /broker_connections\{endpoint="\/bin",subprotocol="bin.v1"\} 1/);
    assert.match(
      metrics,
      /broker_messages_total\{direction="in",endpoint="\/bin",subprotocol="bin.v1"\} \d+/,
    );
    ws.close();
  });

  it('health and readiness answer', async () => {
    const health = await fetch(`http://127.0.0.1:${broker.port}/health`);
    assert.equal(health.status, 200);
    assert.equal(((await health.json()) as { status: string }).status, 'ok');
    assert.equal((await fetch(`http://127.0.0.1:${broker.port}/health/ready`)).status, 200);
  });
});

describe('graceful shutdown', () => {
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
