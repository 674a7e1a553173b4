import assert from 'node:assert/strict';
import { type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { DEFAULT_CONFIG } from '../src/default-config.js';
import { droppedEvents, startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { opened, waitFor } from './support/ws-helpers.js';

/** Events published: 3,000 of 4 KB, well past what loopback's socket buffers take for a client that stopped reading. */
const EVENTS = 3000;
const FILLER = 'x'.repeat(4000);
const DROP_ABOVE = 64 * 1024;

function socketOf(ws: WebSocket): Socket {
  return (ws as unknown as { _socket: Socket })._socket;
}

/** Opens `path` with `protocol`, sends `steps` one by one, each answered by one message before the next. */
async function session(url: string, protocol: string, steps: readonly string[]): Promise<WebSocket> {
  // No compression: what is unsent is then what the client has not read, not what zlib has yet to take.
  const ws = new WebSocket(url, protocol, { perMessageDeflate: false });
  await opened(ws);
  for (const step of steps) {
    const answered = new Promise((resolve) => ws.once('message', resolve));
    ws.send(step);
    await answered;
  }
  return ws;
}

interface Protocol {
  readonly path: string;
  readonly subprotocol: string;
  /** What a subscriber sends, in order, each answered once. */
  readonly subscribe: readonly string[];
  /** What the publisher sends first, each answered once. */
  readonly setup: readonly string[];
  /** One event with this text. */
  publish(text: string, seq: number): string;
}

const PROTOCOLS: readonly Protocol[] = [
  {
    path: '/chat',
    subprotocol: 'chat.v1',
    subscribe: [JSON.stringify({ type: 'join', room: 'slow' })],
    setup: [JSON.stringify({ type: 'join', room: 'slow' })],
    publish: (text) => JSON.stringify({ type: 'say', room: 'slow', text }),
  },
  {
    path: '/ws',
    subprotocol: 'wamp.2.json',
    subscribe: [
      JSON.stringify([1, 'realm1', { roles: { subscriber: {} } }]),
      JSON.stringify([32, 1, {}, 'slow.topic']),
    ],
    setup: [JSON.stringify([1, 'realm1', { roles: { publisher: {} } }])],
    publish: (text, seq) => JSON.stringify([16, seq + 1, {}, 'slow.topic', [text]]),
  },
  {
    path: '/graphql',
    subprotocol: 'graphql-transport-ws',
    subscribe: [JSON.stringify({ type: 'connection_init' })],
    setup: [JSON.stringify({ type: 'connection_init' })],
    publish: (text, seq) =>
      JSON.stringify({
        id: `p${seq}`,
        type: 'subscribe',
        payload: {
          query: 'mutation P($payload: String!) { publish(topic: "slow/topic", payload: $payload) }',
          variables: { payload: text },
        },
      }),
  },
];

/** graphql-transport-ws subscribers subscribe after the ack (the subscription itself has no answer). */
const GRAPHQL_SUBSCRIBE = JSON.stringify({
  id: 's',
  type: 'subscribe',
  payload: { query: 'subscription { topic(filter: "slow/topic") { payload } }' },
});

describe(
  'slow consumers: events for a client that stopped reading are dropped and counted, not queued, and it is not cut',
  { timeout: 120_000 },
  () => {
    let broker: TestBroker;
    before(async () => {
      broker = await startDefaultBroker({
        endpoints: DEFAULT_CONFIG.endpoints.map((e) => ({
          ...e,
          slowConsumerDropBytes: DROP_ABOVE,
          pingIntervalMs: 0,
        })),
      });
    });
    after(() => broker?.close());

    for (const protocol of PROTOCOLS) {
      it(`${protocol.subprotocol}: a fast subscriber gets every event, the sleeping one stays open and gets what follows once it reads`, async () => {
        const url = `${broker.url}${protocol.path}`;
        const open = async () => {
          const ws = await session(url, protocol.subprotocol, protocol.subscribe);
          if (protocol.path === '/graphql') ws.send(GRAPHQL_SUBSCRIBE);
          return ws;
        };
        const fast = await open();
        const slow = await open();
        let fastEvents = 0;
        fast.on('message', (data: Buffer) => {
          if (data.includes('event ')) fastEvents++;
        });
        let slowLast = '';
        slow.on('message', (data: Buffer) => (slowLast = data.toString()));
        const publisher = await session(url, protocol.subprotocol, protocol.setup);
        // Until the fast subscriber hears a probe, subscriptions may still be starting.
        let probes = 0;
        await waitFor(() => {
          publisher.send(protocol.publish(`probe ${probes}`, 100_000 + probes++));
          return slowLast.includes('probe');
        });
        socketOf(slow).pause();
        const before = await droppedEvents(broker, protocol.path);
        const caughtUp = (events: number) =>
          new Promise<void>((resolve) => {
            const check = () => {
              if (fastEvents < events) return;
              fast.off('message', check);
              resolve();
            };
            fast.on('message', check);
            check();
          });
        for (let i = 0; i < EVENTS; i++) {
          publisher.send(protocol.publish(`event ${i} ${FILLER}`, i));
          // Paced by the fast subscriber (a burst under the drop threshold): only the sleeping one falls behind.
          if (i % 10 === 9) await caughtUp(i + 1);
        }
        await waitFor(() => fastEvents === EVENTS);
        assert.ok(
          (await droppedEvents(broker, protocol.path)) > before,
          'events dropped for the sleeping subscriber',
        );
        assert.equal(slow.readyState, WebSocket.OPEN);
        socketOf(slow).resume();
        await waitFor(() => {
          publisher.send(protocol.publish('the end', 200_000));
          return slowLast.includes('the end');
        });
        for (const ws of [fast, slow, publisher]) ws.close();
      });
    }
  },
);
