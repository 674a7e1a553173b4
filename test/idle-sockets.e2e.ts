import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Module } from '@nestjs/common';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { waitFor } from './support/ws-helpers.js';

const main = fileURLToPath(new URL('../src/main.js', import.meta.url));

function socketTo(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.once('error', reject);
  });
}

function closedWithin(socket: Socket, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(true);
    // Read, or a close after a response (Node's own 408 for a head that did not come) goes unseen.
    socket.resume();
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

@Controller('slow')
class SlowController {
  @Get()
  async slow(): Promise<{ done: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    return { done: true };
  }
}

@Module({ controllers: [SlowController] })
class SlowModule {}

describe('sockets that say nothing', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker(
      {
        http: { headersTimeoutMs: 500 },
        endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
      },
      [SlowModule],
    );
  });
  after(() => broker.close());

  it('a connection that never sends a byte is closed by the head timeout', async () => {
    const silent = await socketTo(broker.port);
    assert.equal(await closedWithin(silent, 5000), true);
  });

  it('a request the application answers slowly (1.5 s, head timeout 0.5 s) is not cut', async () => {
    const res = await fetch(`http://127.0.0.1:${broker.port}/slow`);
    assert.deepEqual(await res.json(), { done: true });
  });
});

describe('sockets that say nothing, on a TLS listener', () => {
  let broker: TestBroker;
  before(async () => {
    const { certFile, keyFile } = selfSignedCertificate();
    broker = await startTestBroker({
      tls: { certFile, keyFile },
      http: { headersTimeoutMs: 500 },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
    });
  });
  after(() => broker.close());

  it('a TCP connection that never starts its TLS handshake is closed by the head timeout too', async () => {
    const silent = await socketTo(broker.port);
    assert.equal(await closedWithin(silent, 5000), true);
  });

  it('so is one that finished its TLS handshake and then sends nothing', async () => {
    const secure = tlsConnect({ port: broker.port, host: '127.0.0.1', rejectUnauthorized: false });
    secure.on('error', () => undefined);
    await new Promise((resolve) => secure.once('secureConnect', resolve));
    assert.equal(await closedWithin(secure, 5000), true);
  });
});

describe('raw sockets are bounded, not only WebSockets', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({
      limits: { maxConnections: 2 },
      http: { headersTimeoutMs: 30_000 },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
    });
  });
  after(() => broker.close());

  it('idle connects beyond the connection limit and its headroom (1,024) are closed at once', async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    // From five addresses: each stays within its own share of silent sockets (256, see below).
    for (let i = 0; i < 1100; i++) {
      const socket = await socketTo(broker.port, `127.0.1.${1 + (i % 5)}`);
      socket.on('close', () => closed++);
      socket.on('error', () => undefined);
      sockets.push(socket);
    }
    await waitFor(() => closed >= 1100 - 1026);
    assert.equal(sockets.filter((s) => !s.destroyed).length, 1026);
    for (const socket of sockets) socket.destroy();
  });
});

describe('silent sockets: each address gets its share of them', () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({
      limits: { maxConnectionsPerAddress: 20 },
      http: { headersTimeoutMs: 30_000 },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
    });
  });
  after(() => broker.close());

  it('past maxConnectionsPerAddress sockets that have sent nothing, an address’s next ones are closed at once; other addresses are served', async () => {
    const sockets: Socket[] = [];
    let closed = 0;
    for (let i = 0; i < 30; i++) {
      const socket = await socketTo(broker.port, '127.0.2.1');
      socket.on('close', () => closed++);
      socket.on('error', () => undefined);
      sockets.push(socket);
    }
    await waitFor(() => closed >= 10);
    assert.equal(sockets.filter((s) => !s.destroyed).length, 20);
    const health = await fetch(`http://127.0.0.1:${broker.port}/health`);
    assert.equal(health.status, 200, 'another address is served');
    // Each closed one is counted, though it never got an HTTP answer to count.
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    assert.match(metrics, /^broker_connections_refused_at_accept_total 10$/m);
    for (const socket of sockets) socket.destroy();
    // Their room comes back once the broker has seen them go.
    await waitFor(async () => {
      const again = await socketTo(broker.port, '127.0.2.1');
      const refused = await closedWithin(again, 200);
      again.destroy();
      return !refused;
    });
  });
});

describe('SIGTERM with plain HTTP clients connected', () => {
  it('a silent socket and a keep-alive client sending requests back to back do not hold the broker in its drain', async (t) => {
    // A drain that waited for them would last past the SIGKILL below: the exit code would not be 0.
    const config = join(mkdtempSync(join(tmpdir(), 'drain-')), 'config.json');
    writeFileSync(config, JSON.stringify({ shutdown: { drainTimeoutMs: 120_000 } }));
    const child = spawn(process.execPath, [main], {
      env: {
        PATH: process.env['PATH'] ?? '',
        HOST: '127.0.0.1',
        PORT: '0',
        CONFIG: config,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // A failure below must not leave the broker running: the test run would wait for it forever.
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    // A cold start of the whole broker on a loaded machine can take a while.
    await waitFor(() => /broker listening/.test(output), 30_000);
    const port = Number(/"url":"ws:\/\/127\.0\.0\.1:(\d+)"/.exec(output)?.[1]);
    const silent = await socketTo(port);
    silent.on('error', () => undefined);
    // A keep-alive client: one request after the other on one connection, for as long as it is answered.
    const keepAlive = await socketTo(port);
    keepAlive.on('error', () => undefined);
    const statuses: number[] = [];
    let buffered = '';
    keepAlive.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
        const head = buffered.slice(0, end);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) break;
        statuses.push(Number(head.split(' ')[1]));
        buffered = buffered.slice(end + 4 + length);
        if (!keepAlive.destroyed) keepAlive.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      }
    });
    keepAlive.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    await waitFor(() => statuses.length > 5);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 0, `not exited by itself: ${output.slice(-2000)}`);
    assert.ok(silent.destroyed || (await closedWithin(silent, 1000)));
    assert.ok(keepAlive.destroyed || (await closedWithin(keepAlive, 1000)));
  });
});
