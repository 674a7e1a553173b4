import 'reflect-metadata';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BrokerWsAdapter } from 'ws-protocol-broker';
import { startTestBroker, type StartedTestBroker } from 'ws-protocol-broker/testing';
import WebSocket from 'ws';
import { AppModule, brokerConfig, FeaturesModule } from '../src/app.module.js';

const SECRET = 'example-secret-change-me-32-characters!';

/** An HS256 JWT, made by hand: the example needs no JWT library for its tests. */
function token(sub: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub, exp: Math.floor(Date.now() / 1000) + 300 })}`;
  return `${body}.${createHmac('sha256', SECRET).update(body).digest('base64url')}`;
}

function messages(ws: WebSocket): () => Promise<string> {
  const queue: string[] = [];
  const waiting: ((text: string) => void)[] = [];
  ws.on('message', (data: Buffer) => {
    const text = data.toString('utf8');
    const waiter = waiting.shift();
    if (waiter) waiter(text);
    else queue.push(text);
  });
  return () => {
    const next = queue.shift();
    if (next !== undefined) return Promise.resolve(next);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no message within 3 s')), 3000);
      waiting.push((text) => {
        clearTimeout(timer);
        resolve(text);
      });
    });
  };
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}

/** The first `snapshot` event of the dashboard's feed (server-sent events), parsed. */
async function firstSnapshot(url: string): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 5000);
  try {
    const res = await fetch(url, { signal: controller.signal });
    assert.equal(res.status, 200);
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      const event = /^event: snapshot\ndata: (.*)\n\n/m.exec(text);
      if (event) return JSON.parse(event[1] as string);
    }
    throw new Error('the feed ended before a snapshot');
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

function refused(ws: WebSocket): Promise<number> {
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.on('error', () => undefined);
  });
}

describe('the application as main.ts boots it (NestFactory.create, BrokerWsAdapter, listen)', () => {
  let app: INestApplication;
  let port: number;
  before(async () => {
    app = await NestFactory.create(AppModule, { logger: false });
    app.useWebSocketAdapter(new BrokerWsAdapter(app));
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  after(() => app.close());

  it('serves its own controller next to the broker’s /health', async () => {
    assert.deepEqual(await (await fetch(`http://127.0.0.1:${port}/hello`)).json(), { hello: 'world' });
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
  });

  it('its own subprotocol module answers behind the broker’s handshake', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/shout`, 'shout.v1');
    const next = messages(ws);
    await opened(ws);
    assert.equal(ws.protocol, 'shout.v1');
    ws.send('hi there');
    assert.equal(await next(), 'HI THERE');
    ws.close();
  });

  it('its own table behind its own admin route, and its card and panel on the broker’s dashboard feed', async () => {
    // The admin API (its routes and the dashboard's feed) answers loopback clients when no admin token is set.
    const shoutsOf = async (user: string): Promise<number> => {
      const res = await fetch(`http://127.0.0.1:${port}/admin/v1/shouts`);
      assert.equal(res.status, 200);
      const shouters = (await res.json()) as { user: string; shouts: number }[];
      return shouters.find((s) => s.user === user)?.shouts ?? 0;
    };
    const before = await shoutsOf('anonymous');
    const ws = new WebSocket(`ws://127.0.0.1:${port}/shout`, 'shout.v1');
    const next = messages(ws);
    await opened(ws);
    ws.send('count me');
    await next();
    ws.close();
    // The count is written behind the answer: read until it is there (3 s at most).
    let after = before;
    for (let tries = 0; tries < 60 && after === before; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = await shoutsOf('anonymous');
    }
    assert.equal(after, before + 1);
    // Behind the admin API's guard: with no admin token, a request that came through a proxy is refused.
    const proxied = await fetch(`http://127.0.0.1:${port}/admin/v1/shouts`, {
      headers: { 'X-Forwarded-For': '203.0.113.7' },
    });
    assert.equal(proxied.status, 403);

    const snapshot = (await firstSnapshot(`http://127.0.0.1:${port}/admin/v1/dashboard/feed`)) as {
      modules: Record<string, { title: string; values: Record<string, number> }>;
      panels: { id: string; rows: { key: string; cells: Record<string, unknown> }[] }[];
    };
    assert.equal(snapshot.modules['shout.v1']?.title, 'Shout');
    assert.equal(snapshot.modules['shout.v1']?.values['shouts'], after, 'every shout so far was anonymous');
    const panel = snapshot.panels.find((p) => p.id === 'shouters');
    assert.ok(panel, 'the shouters panel is in the feed');
    assert.equal(panel.rows.find((row) => row.key === 'anonymous')?.cells['shouts'], after);
  });

  it('its own gateway: the handshake refuses a missing token (401), then the gateway runs with the context', async () => {
    assert.equal(await refused(new WebSocket(`ws://127.0.0.1:${port}/rooms/blue`, 'rooms.v1')), 401);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/rooms/blue`, 'rooms.v1', {
      headers: { Authorization: `Bearer ${token('ann')}` },
    });
    const next = messages(ws);
    await opened(ws);
    assert.deepEqual(JSON.parse(await next()), { event: 'joined', data: { room: 'blue', user: 'ann' } });
    ws.send(JSON.stringify({ event: 'say', data: { text: 'hello' } }));
    assert.deepEqual(JSON.parse(await next()), { event: 'said', data: { text: 'hello' } });
    ws.send(JSON.stringify({ event: 'say', data: { text: '' } }));
    const refusal = JSON.parse(await next()) as { event: string; data: { message: string } };
    assert.equal(refusal.event, 'exception');
    assert.match(refusal.data.message, /text must be longer than or equal to 1 characters/);
    ws.close();
  });
});

describe('the features under ws-protocol-broker/testing’s startTestBroker', () => {
  let broker: StartedTestBroker;
  before(async () => {
    broker = await startTestBroker({
      config: brokerConfig({ SHOUT_MAX_LENGTH: '8' }),
      imports: [FeaturesModule],
    });
  });
  after(() => broker.close());

  it('the module’s own config key, validated with the broker’s, shapes what it does', async () => {
    const ws = new WebSocket(`${broker.url}/shout`, 'shout.v1');
    const next = messages(ws);
    await opened(ws);
    ws.send('8 chars!');
    assert.equal(await next(), '8 CHARS!');
    const closed = new Promise<[number, string]>((resolve) =>
      ws.once('close', (code, reason) => resolve([code, reason.toString()])),
    );
    ws.send('nine char');
    assert.deepEqual(await closed, [4413, 'longer than 8 characters']);
  });

  it('a bad value of that key stops the boot, the key named', async () => {
    await assert.rejects(
      startTestBroker({
        config: { ...brokerConfig({}), shout: { maxLength: 0 } },
        imports: [FeaturesModule],
      }),
      (err: Error) => err.name === 'ConfigError' && /shout\.maxLength/.test(err.message),
    );
  });

  it('a test broker on an ephemeral port serves the same modules', async () => {
    const ws = new WebSocket(`${broker.url}/rooms/red?token=${token('bo')}`, 'rooms.v1');
    const next = messages(ws);
    await opened(ws);
    assert.deepEqual(JSON.parse(await next()), { event: 'joined', data: { room: 'red', user: 'bo' } });
    ws.close();
  });
});
