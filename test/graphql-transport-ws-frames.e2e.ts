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
import { closed, opened, waitFor } from './support/ws-helpers.js';

describe('graphql-transport-ws raw frames: every close code and bad message', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startGraphqlBroker();
  });
  after(() => broker.close());

  /** A raw client past connection_ack on /open. */
  async function acked(
    path = '/open',
    payload?: Record<string, unknown>,
  ): Promise<{ ws: WebSocket; queue: MessageQueue }> {
    const ws = new WebSocket(`${broker.url}${path}`, 'graphql-transport-ws');
    const queue = new MessageQueue(ws);
    await opened(ws);
    ws.send(JSON.stringify({ type: 'connection_init', ...(payload === undefined ? {} : { payload }) }));
    assert.equal((await queue.json()).type, 'connection_ack');
    return { ws, queue };
  }

  async function closeOf(ws: WebSocket, send?: string | Buffer): Promise<{ code: number; reason: string }> {
    const closing = closed(ws);
    if (send !== undefined) ws.send(send);
    return closing;
  }

  it('ping gets pong; subscribe, next, complete; complete from the client stops a subscription', async () => {
    const { ws, queue } = await acked();
    ws.send(JSON.stringify({ type: 'ping', payload: { n: 1 } }));
    assert.deepEqual(await queue.json(), { type: 'pong', payload: { n: 1 } });
    ws.send(JSON.stringify({ type: 'subscribe', id: 'q', payload: { query: '{ status { connections } }' } }));
    assert.equal((await queue.json()).type, 'next');
    assert.deepEqual(await queue.json(), { id: 'q', type: 'complete' });
    ws.send(
      JSON.stringify({
        type: 'subscribe',
        id: 's',
        payload: { query: 'subscription { topic(filter: "raw/1") { payload } }' },
      }),
    );
    const publisher = transportClient(`${broker.url}/open`);
    await untilDelivered(publisher, 'raw/1');
    const probe = await queue.json();
    assert.deepEqual(probe, { id: 's', type: 'next', payload: { data: { topic: { payload: PROBE } } } });
    ws.send(JSON.stringify({ type: 'complete', id: 's' }));
    await waitFor(
      async () =>
        (
          (await request(publisher, 'mutation { publish(topic: "raw/1", payload: "x") }')).data as {
            publish: number;
          }
        ).publish === 0,
    );
    await publisher.dispose();
    ws.close();
  });

  it('complete then subscribe with the same id in one read: the new operation runs, no stray complete', async () => {
    const { ws, queue } = await acked();
    const subscribe = (topic: string) =>
      JSON.stringify({
        type: 'subscribe',
        id: 'x',
        payload: { query: `subscription { topic(filter: "${topic}") { payload } }` },
      });
    ws.send(subscribe('reuse/1'));
    const publisher = transportClient(`${broker.url}/open`);
    await untilDelivered(publisher, 'reuse/1');
    assert.equal((await queue.json()).type, 'next');
    // PROTOCOL.md: "Once a client completes an operation, it is free to re-use that ID."
    const socket = (ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    socket.cork();
    ws.send(JSON.stringify({ type: 'complete', id: 'x' }));
    ws.send(subscribe('reuse/2'));
    socket.uncork();
    await untilDelivered(publisher, 'reuse/2');
    assert.deepEqual(await queue.json(), {
      id: 'x',
      type: 'next',
      payload: { data: { topic: { payload: PROBE } } },
    });
    await publisher.dispose();
    ws.close();
  });

  it('a validation error answers error (an array) for that id', async () => {
    const { ws, queue } = await acked();
    ws.send(JSON.stringify({ type: 'subscribe', id: 'bad', payload: { query: '{ nope }' } }));
    const answer = await queue.json();
    assert.equal(answer.type, 'error');
    assert.equal(answer.id, 'bad');
    assert.ok(Array.isArray(answer.payload));
    ws.close();
  });

  it('a value nested 2,000 levels deep (4 KB, under maxTokens) answers error for that id; the connection stays', async () => {
    const { ws, queue } = await acked();
    const deep = `{ a(x: ${'['.repeat(2000)}${']'.repeat(2000)}) }`;
    ws.send(JSON.stringify({ type: 'subscribe', id: 'deep', payload: { query: deep } }));
    const answer = await queue.json();
    assert.equal(answer.type, 'error', JSON.stringify(answer));
    assert.equal(answer.id, 'deep');
    assert.match(JSON.stringify(answer.payload), /nest/);
    ws.send(JSON.stringify({ type: 'subscribe', id: 'bad', payload: { query: '{ nope }' } }));
    assert.equal((await queue.json()).id, 'bad', 'the connection still answers');
    ws.close();
  });

  it('invalid JSON, an invalid message, an unknown type or a server-only type: 4400 with the reason', async () => {
    for (const [frame, reason] of [
      ['{not json', 'Invalid message: not JSON'],
      ['{"type":"subscribe","id":"1"}', /'payload' property to be an object/],
      ['{"type":"dance"}', /Invalid message 'type' property "dance"/],
      ['{"type":"next","id":"1","payload":{}}', 'Invalid message: "next" is sent by servers, not clients'],
      // A ping's payload is echoed in the pong: 5,000 levels of it once overflowed the stack (4500).
      [`{"type":"ping","payload":{"a":${'['.repeat(5000)}${']'.repeat(5000)}}}`, /nested deeper than/],
    ] as const) {
      const { ws } = await acked();
      const { code, reason: got } = await closeOf(ws, frame);
      assert.equal(code, 4400, frame);
      if (typeof reason === 'string') assert.equal(got, reason);
      else assert.match(got, reason);
    }
  });

  it('a client that keeps sending refused operations is closed 4429 after 20 in 10 s; each refusal was answered', async () => {
    const { ws, queue } = await acked();
    const refuse = (i: number) =>
      ws.send(JSON.stringify({ type: 'subscribe', id: `r${i}`, payload: { query: `{ nope${i} }` } }));
    for (let i = 0; i < 20; i++) {
      refuse(i);
      assert.equal((await queue.json())['type'], 'error');
    }
    const closing = closed(ws);
    refuse(20);
    const { code, reason } = await closing;
    assert.equal(code, 4429);
    assert.match(reason, /Too many refused operations/);
  });

  it('subscribe before connection_ack: 4401', async () => {
    const ws = new WebSocket(`${broker.url}/open`, 'graphql-transport-ws');
    await opened(ws);
    assert.deepEqual(
      await closeOf(
        ws,
        JSON.stringify({ type: 'subscribe', id: '1', payload: { query: '{ status { connections } }' } }),
      ),
      {
        code: 4401,
        reason: 'Unauthorized',
      },
    );
  });

  it('no connection_init in time: 4408', async () => {
    const ws = new WebSocket(`${broker.url}/open`, 'graphql-transport-ws');
    const closing = closed(ws);
    await opened(ws);
    assert.deepEqual(await closing, { code: 4408, reason: 'Connection initialisation timeout' });
  });

  it('a duplicate id of a running operation: 4409', async () => {
    const { ws } = await acked();
    const subscribe = JSON.stringify({
      type: 'subscribe',
      id: 'dup',
      payload: { query: 'subscription { topic(filter: "dup") { topic } }' },
    });
    ws.send(subscribe);
    assert.deepEqual(await closeOf(ws, subscribe), {
      code: 4409,
      reason: 'Subscriber for dup already exists',
    });
  });

  it('a second connection_init: 4429', async () => {
    const { ws } = await acked();
    assert.deepEqual(await closeOf(ws, JSON.stringify({ type: 'connection_init' })), {
      code: 4429,
      reason: 'Too many initialisation requests',
    });
  });

  it('more operations than the limit: 4429 with the reason; other clients untouched', async () => {
    const bystander = transportClient(`${broker.url}/open`);
    const events = new Subscription(bystander, 'subscription { topic(filter: "bystander") { payload } }');
    await untilDelivered(bystander, 'bystander');
    const { ws } = await acked();
    for (const id of ['1', '2', '3']) {
      ws.send(
        JSON.stringify({
          type: 'subscribe',
          id,
          payload: { query: `subscription { topic(filter: "many/${id}") { topic } }` },
        }),
      );
    }
    const { code, reason } = await closeOf(
      ws,
      JSON.stringify({ type: 'subscribe', id: '4', payload: { query: '{ status { connections } }' } }),
    );
    assert.equal(code, 4429);
    assert.equal(reason, 'Too many operations: at most 3 at once on one connection');
    await request(bystander, 'mutation { publish(topic: "bystander", payload: "fine") }');
    assert.equal((await events.nextEvent())['payload'], 'fine');
    events.stop();
    await bystander.dispose();
  });

  it('an application hook that throws: 4500, the broker goes on', async () => {
    const { ws } = await acked('/open', { explode: true });
    const { code, reason } = await closeOf(
      ws,
      JSON.stringify({ type: 'subscribe', id: '1', payload: { query: '{ status { connections } }' } }),
    );
    assert.deepEqual({ code, reason }, { code: 4500, reason: 'Internal server error' });
    const { ws: next, queue } = await acked();
    next.send(
      JSON.stringify({ type: 'subscribe', id: '1', payload: { query: '{ status { connections } }' } }),
    );
    assert.equal((await queue.json()).type, 'next');
    next.close();
  });

  it('oversize messages: 1009; binary frames: 1003', async () => {
    const { ws } = await acked();
    const big = JSON.stringify({
      type: 'subscribe',
      id: '1',
      payload: { query: `{ status { connections } } # ${'x'.repeat(70 * 1024)}` },
    });
    assert.equal((await closeOf(ws, big)).code, 1009);
    const { ws: binary } = await acked();
    assert.equal((await closeOf(binary, Buffer.from('{"type":"ping"}'))).code, 1003);
  });

  it('a subscriber that stops reading loses events (dropped, counted) rather than its connection; others keep their stream', async () => {
    const { ws: stalled } = await acked();
    stalled.send(
      JSON.stringify({
        type: 'subscribe',
        id: 's',
        payload: { query: 'subscription { topic(filter: "flood") { payload } }' },
      }),
    );
    const reader = transportClient(`${broker.url}/open`);
    const events = new Subscription(reader, 'subscription { topic(filter: "flood") { payload } }');
    await untilDelivered(reader, 'flood');
    (stalled as unknown as { _socket: { pause(): void } })._socket.pause();
    const publisher = transportClient(`${broker.url}/open`);
    const chunk = 'y'.repeat(48 * 1024);
    assert.ok(
      await floodUntilDropped(broker, '/open', publisher, 'flood', chunk),
      'events for the stalled subscriber were dropped',
    );
    assert.ok(!broker.logText().includes('outbound buffer limit exceeded'), 'and it was not cut off');
    assert.equal(stalled.readyState, stalled.OPEN);
    await request(publisher, 'mutation { publish(topic: "flood", payload: "after") }');
    let got: Record<string, unknown>;
    do got = await events.nextEvent();
    while (got['payload'] === chunk);
    assert.equal(got['payload'], 'after');
    events.stop();
    stalled.terminate();
    await publisher.dispose();
    await reader.dispose();
  });
});
