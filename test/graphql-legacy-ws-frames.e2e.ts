import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import {
  floodUntilDropped,
  PROBE,
  request,
  Subscription,
  transportClient,
  untilDelivered,
} from './support/graphql-clients.js';
import { startGraphqlBroker } from './support/graphql-test-module.js';
import { MessageQueue } from './support/message-queue.js';
import { type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, opened } from './support/ws-helpers.js';

describe('graphql-ws (legacy) raw frames', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startGraphqlBroker();
  });
  after(() => broker.close());

  /** A raw legacy client; `init` sends connection_init and waits for the ack and the first ka. */
  async function raw(init = true, path = '/open'): Promise<{ ws: WebSocket; queue: MessageQueue }> {
    const ws = new WebSocket(`${broker.url}${path}`, 'graphql-ws');
    const queue = new MessageQueue(ws);
    await opened(ws);
    assert.equal(ws.protocol, 'graphql-ws');
    if (init) {
      ws.send(JSON.stringify({ type: 'connection_init' }));
      assert.equal((await queue.json()).type, 'connection_ack');
      assert.deepEqual(await queue.json(), { type: 'ka' });
    }
    return { ws, queue };
  }

  const start = (id: string, query: string): string =>
    JSON.stringify({ type: 'start', id, payload: { query } });

  it('ka right after the ack; data and complete for a query; stop ends a subscription with complete', async () => {
    const { ws, queue } = await raw();
    ws.send(start('q', '{ status { connections } }'));
    assert.equal((await queue.json()).type, 'data');
    assert.deepEqual(await queue.json(), { type: 'complete', id: 'q' });
    ws.send(start('s', 'subscription { topic(filter: "raw/legacy") { payload } }'));
    const prober = transportClient(`${broker.url}/open`);
    await untilDelivered(prober, 'raw/legacy');
    assert.deepEqual(await queue.json(), {
      type: 'data',
      id: 's',
      payload: { data: { topic: { payload: PROBE } } },
    });
    ws.send(JSON.stringify({ type: 'stop', id: 's' }));
    let answer = await queue.json();
    while (answer.type === 'data') answer = await queue.json();
    assert.deepEqual(answer, { type: 'complete', id: 's' });
    const after = await request(prober, 'mutation { publish(topic: "raw/legacy", payload: "x") }');
    assert.deepEqual(after.data, { publish: 0 });
    await prober.dispose();
    ws.close();
  });

  it('a start before connection_init is never executed: it gets an error', async () => {
    const listener = transportClient(`${broker.url}/open`);
    const events = new Subscription(listener, 'subscription { topic(filter: "early") { payload } }');
    await untilDelivered(listener, 'early');
    const { ws, queue } = await raw(false);
    ws.send(start('e', 'mutation { publish(topic: "early", payload: "too early") }'));
    assert.deepEqual(await queue.json(), {
      type: 'error',
      id: 'e',
      payload: {
        message: 'Send connection_init first: no operation runs before the connection is acknowledged',
      },
    });
    await request(listener, 'mutation { publish(topic: "early", payload: "marker") }');
    assert.equal((await events.nextEvent())['payload'], 'marker');
    events.stop();
    await listener.dispose();
    ws.close();
  });

  it('a start sent with connection_init waits for the (async) credential check, then runs', async () => {
    const ws = new WebSocket(`${broker.url}/graphql`, 'graphql-ws');
    const queue = new MessageQueue(ws);
    await opened(ws);
    ws.send(
      JSON.stringify({ type: 'connection_init', payload: { token: await signToken({ sub: 'erin' }) } }),
    );
    ws.send(start('q', '{ status { connections } }'));
    assert.deepEqual(
      [await queue.json(), await queue.json(), await queue.json(), await queue.json()].map((m) => m.type),
      ['connection_ack', 'ka', 'data', 'complete'],
    );
    ws.close();
  });

  it('a refused connection_init: connection_error with the reason, then close 1011; queued starts never run', async () => {
    const ws = new WebSocket(`${broker.url}/graphql`, 'graphql-ws');
    const queue = new MessageQueue(ws);
    await opened(ws);
    const closing = closed(ws);
    ws.send(
      JSON.stringify({ type: 'connection_init', payload: { token: await signToken({ expiresIn: -60 }) } }),
    );
    ws.send(start('q', '{ status { connections } }'));
    assert.deepEqual(await queue.json(), {
      type: 'connection_error',
      payload: { message: 'the token was not accepted: the token has expired' },
    });
    assert.equal((await closing).code, 1011);
    assert.deepEqual(queue.pending(), []);
  });

  it('a client that keeps sending refused operations gets an error for each, then close 4429 after 20 in 10 s', async () => {
    const { ws, queue } = await raw();
    const closing = closed(ws);
    for (let i = 0; i < 21; i++) ws.send(start(`r${i}`, `{ nope${i} }`));
    for (let i = 0; i < 21; i++) assert.equal((await queue.json())['type'], 'error');
    const { code, reason } = await closing;
    assert.equal(code, 4429);
    assert.match(reason, /Too many refused operations/);
  });

  it('invalid JSON, unknown types and a second init get connection_error; a bad start gets error; the connection goes on', async () => {
    const { ws, queue } = await raw();
    for (const [frame, answer] of [
      ['{oops', { type: 'connection_error', payload: { message: 'Invalid message: not JSON' } }],
      [
        `{"type":"start","id":"d","payload":{"query":"{ a }","variables":{"v":${'['.repeat(5000)}${']'.repeat(5000)}}}}`,
        {
          type: 'connection_error',
          payload: { message: 'Invalid message: the message is nested deeper than 64 levels' },
        },
      ],
      [
        '{"type":"subscribe","id":"1"}',
        {
          type: 'connection_error',
          payload: {
            message:
              'Invalid message: unknown type "subscribe" (expected one of connection_init, start, stop, connection_terminate)',
          },
        },
      ],
      [
        '{"type":"connection_init"}',
        {
          type: 'connection_error',
          payload: { message: 'connection_init was already received on this connection' },
        },
      ],
      [
        '{"type":"start","id":"x","payload":{}}',
        { type: 'error', id: 'x', payload: { message: 'Invalid start: payload.query must be a string' } },
      ],
    ] as const) {
      ws.send(frame);
      assert.deepEqual(await queue.json(), answer, frame);
    }
    ws.send(start('ok', '{ status { connections } }'));
    assert.equal((await queue.json()).type, 'data');
    ws.close();
  });

  it('a duplicate id replaces the running operation', async () => {
    const { ws, queue } = await raw();
    ws.send(start('s', 'subscription { topic(filter: "dup/old") { topic } }'));
    ws.send(start('s', 'subscription { topic(filter: "dup/new") { topic } }'));
    const prober = transportClient(`${broker.url}/open`);
    await untilDelivered(prober, 'dup/new');
    assert.deepEqual(await queue.json(), {
      type: 'data',
      id: 's',
      payload: { data: { topic: { topic: 'dup/new' } } },
    });
    assert.deepEqual((await request(prober, 'mutation { publish(topic: "dup/old", payload: "x") }')).data, {
      publish: 0,
    });
    await prober.dispose();
    ws.close();
  });

  it('more operations than the limit: close 4429 with the reason', async () => {
    const { ws } = await raw();
    const closing = closed(ws);
    for (const id of ['1', '2', '3', '4'])
      ws.send(start(id, `subscription { topic(filter: "many/${id}") { topic } }`));
    assert.deepEqual(await closing, {
      code: 4429,
      reason: 'Too many operations: at most 3 at once on one connection',
    });
  });

  it('a legacy subscriber that stops reading loses events (dropped, counted) rather than its connection; the publisher goes on', async () => {
    const { ws: stalled, queue } = await raw();
    stalled.send(start('s', 'subscription { topic(filter: "legacy-flood") { payload } }'));
    const publisher = transportClient(`${broker.url}/open`);
    await untilDelivered(publisher, 'legacy-flood');
    assert.equal((await queue.json()).type, 'data');
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    const chunk = 'z'.repeat(48 * 1024);
    assert.ok(
      await floodUntilDropped(broker, '/open', publisher, 'legacy-flood', chunk),
      'events for the stalled subscriber were dropped',
    );
    assert.ok(!broker.logText().includes('outbound buffer limit exceeded'), 'and it was not cut off');
    assert.equal(stalled.readyState, stalled.OPEN);
    stalled.terminate();
    await publisher.dispose();
  });

  it('no connection_init in time: 4408; connection_terminate: 1000; oversize: 1009', async () => {
    const { ws: idle } = await raw(false);
    assert.deepEqual(await closed(idle), { code: 4408, reason: 'Connection initialisation timeout' });
    const { ws: leaving } = await raw();
    const leavingClosed = closed(leaving);
    leaving.send(JSON.stringify({ type: 'connection_terminate' }));
    assert.equal((await leavingClosed).code, 1000);
    const { ws: big } = await raw();
    const bigClosed = closed(big);
    big.send(start('b', `{ status { connections } } # ${'x'.repeat(70 * 1024)}`));
    assert.equal((await bigClosed).code, 1009);
  });
});
