import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { closed, nextMessage, opened } from './support/ws-helpers.js';

describe('GraphQL limits from the configuration file', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startDefaultBroker({ graphql: { limits: { maxOperations: 1 } } });
  });
  after(() => broker.close());

  it('graphql.limits.maxOperations: 1 closes the second concurrent operation with 4429', async () => {
    const ws = new WebSocket(`${broker.url}/graphql`, 'graphql-transport-ws');
    await opened(ws);
    const ack = nextMessage(ws);
    ws.send(JSON.stringify({ type: 'connection_init' }));
    assert.equal((JSON.parse(await ack) as { type: string }).type, 'connection_ack');
    const subscribe = (id: string) =>
      JSON.stringify({
        id,
        type: 'subscribe',
        payload: { query: 'subscription { topic(filter: "a/#") { topic } }' },
      });
    const end = closed(ws);
    ws.send(subscribe('1'));
    ws.send(subscribe('2'));
    const { code, reason } = await end;
    assert.equal(code, 4429);
    assert.equal(reason, 'Too many operations: at most 1 at once on one connection');
  });
});
