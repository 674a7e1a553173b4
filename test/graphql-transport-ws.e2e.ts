import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { request, Subscription, transportClient, untilDelivered } from './support/graphql-clients.js';
import { startGraphqlBroker } from './support/graphql-test-module.js';
import { MessageQueue } from './support/message-queue.js';
import { type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, opened } from './support/ws-helpers.js';

describe('graphql-transport-ws', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startGraphqlBroker();
  });
  after(() => broker.close());

  describe('with the graphql-ws client', () => {
    it('a token in connection_init authenticates; queries and the ack work', async () => {
      const client = transportClient(`${broker.url}/graphql`, { token: await signToken({ sub: 'alice' }) });
      let ack: unknown;
      client.on('connected', (_socket, payload) => (ack = payload));
      const result = await request(client, '{ status { connections uptimeSeconds } }');
      const status = (result.data as { status: { connections: number } }).status;
      assert.ok(status.connections >= 1);
      assert.deepEqual(ack, { greeting: 'hello alice' });
      await client.dispose();
    });

    it('a bad or missing token closes 4403 with the reason', async () => {
      for (const [params, reason] of [
        [
          { token: await signToken({ secret: 'another-secret-that-is-32-characters-long' }) },
          /Forbidden: the token was not accepted: the signature is invalid/,
        ],
        [
          { token: await signToken({ expiresIn: -60 }) },
          /Forbidden: the token was not accepted: the token has expired/,
        ],
        [{}, /Forbidden: a credential is required/],
        [
          { token: await signToken({ claims: { scope: 'endpoint:/chat' } }) },
          /Forbidden: the token was not accepted: this credential does not open \/graphql/,
        ],
        [{ token: await signToken(), refuse: true }, /Forbidden: the application refused the connection/],
      ] as const) {
        const client = transportClient(`${broker.url}/graphql`, params);
        const err = (await request(client, '{ status { connections } }').then(
          () => assert.fail('the operation ran'),
          (e: unknown) => e,
        )) as { detail: { code: number; reason: string } };
        assert.equal(err.detail.code, 4403);
        assert.match(err.detail.reason, reason);
        await client.dispose();
      }
      assert.ok(!broker.logText().includes('eyJ'), 'no token reaches the log');
    });

    it('a handshake credential (Authorization header) is enough without a token in connection_init', async () => {
      const token = await signToken({ sub: 'bob' });
      const ws = new WebSocket(`${broker.url}/graphql`, 'graphql-transport-ws', {
        headers: { Authorization: `Bearer ${token}` },
      });
      const queue = new MessageQueue(ws);
      await opened(ws);
      ws.send(JSON.stringify({ type: 'connection_init' }));
      assert.equal((await queue.json()).type, 'connection_ack');
      ws.close();
    });

    it('a chat.v1 message published on the bus reaches a GraphQL subscriber', async () => {
      const client = transportClient(`${broker.url}/open`);
      const events = new Subscription(
        client,
        'subscription { topic(filter: "chat/+") { topic payload contentType origin } }',
      );
      await untilDelivered(client, 'chat/probe-room');
      const chat = new WebSocket(`${broker.url}/chat`, 'chat.v1');
      const chatQueue = new MessageQueue(chat);
      await opened(chat);
      assert.equal((await chatQueue.json()).type, 'welcome');
      chat.send(JSON.stringify({ type: 'join', room: 'lobby' }));
      assert.equal((await chatQueue.json()).type, 'joined');
      chat.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'hello graphql' }));
      const event = await events.nextEvent();
      assert.equal(event['topic'], 'chat/lobby');
      assert.equal(event['origin'], 'chat.v1');
      assert.equal(event['contentType'], 'application/json');
      const said = JSON.parse(String(event['payload'])) as Record<string, string>;
      assert.deepEqual(
        { ...said, user: said['user']?.startsWith('guest-') },
        {
          type: 'message',
          room: 'lobby',
          user: true,
          text: 'hello graphql',
        },
      );
      events.stop();
      chat.close();
      await client.dispose();
    });

    it('the publish mutation reaches a bus subscriber in another module (a chat.v1 room)', async () => {
      const chat = new WebSocket(`${broker.url}/chat`, 'chat.v1');
      const chatQueue = new MessageQueue(chat);
      await opened(chat);
      await chatQueue.json();
      chat.send(JSON.stringify({ type: 'join', room: 'graphql-room' }));
      assert.equal((await chatQueue.json()).type, 'joined');
      const client = transportClient(`${broker.url}/open`);
      const text = JSON.stringify({
        type: 'message',
        room: 'graphql-room',
        user: 'gql',
        text: 'from graphql',
      });
      const result = await request(
        client,
        'mutation($p: String!) { publish(topic: "chat/graphql-room", payload: $p) }',
        { p: text },
      );
      assert.deepEqual(result.data, { publish: 1 });
      assert.deepEqual(JSON.parse(await chatQueue.next()), {
        type: 'message',
        room: 'graphql-room',
        user: null,
        text,
        origin: 'graphql',
      });
      chat.close();
      await client.dispose();
    });

    it('an invalid filter or topic is a GraphQL error with code BAD_TOPIC; the connection goes on', async () => {
      const client = transportClient(`${broker.url}/open`);
      const published = await request(client, 'mutation { publish(topic: "a/+/b", payload: "x") }');
      assert.equal(published.errors?.[0]?.extensions?.['code'], 'BAD_TOPIC');
      const subscribed = await request(client, 'subscription { topic(filter: "a/#/b") { topic } }');
      assert.match(String(subscribed.errors?.[0]?.message), /Invalid topic filter/);
      assert.ok((await request(client, '{ status { connections } }')).data);
      await client.dispose();
    });

    it('a validation error or a too deep query fails that operation only', async () => {
      const client = transportClient(`${broker.url}/open`);
      const events = new Subscription(client, 'subscription { topic(filter: "deep/#") { topic payload } }');
      await untilDelivered(client, 'deep/probe');
      for (const [query, reason] of [
        ['{ nope }', /Cannot query field "nope"/],
        ['{ __schema { types { fields { type { name } } } } }', /nested 5 levels deep; at most 4/],
        ['{ status {', /Syntax Error/],
      ] as const) {
        const failure = (await request(client, query).then(
          () => assert.fail('ran'),
          (e: unknown) => e,
        )) as { detail?: { message: string }[] };
        assert.match(String(failure.detail?.[0]?.message), reason, query);
      }
      await request(client, 'mutation { publish(topic: "deep/x", payload: "still here") }');
      assert.equal((await events.nextEvent())['payload'], 'still here');
      events.stop();
      await client.dispose();
    });
  });

  describe('subprotocol selection', () => {
    it('a client offering both protocols gets graphql-transport-ws, in either order', async () => {
      for (const offer of [
        ['graphql-ws', 'graphql-transport-ws'],
        ['graphql-transport-ws', 'graphql-ws'],
      ]) {
        const ws = new WebSocket(`${broker.url}/open`, offer);
        await opened(ws);
        assert.equal(ws.protocol, 'graphql-transport-ws');
        ws.close();
      }
    });

    it('a client offering neither is accepted by the default module and closed 4406', async () => {
      const ws = new WebSocket(`${broker.url}/open`);
      const closing = closed(ws);
      await opened(ws);
      assert.equal(ws.protocol, '');
      assert.deepEqual(await closing, { code: 4406, reason: 'Subprotocol not acceptable' });
    });
  });
});
