import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SubscriptionClient } from 'subscriptions-transport-ws';
import WebSocket from 'ws';
import { PROBE, Subscription, transportClient, untilDelivered } from './support/graphql-clients.js';
import { startGraphqlBroker } from './support/graphql-test-module.js';
import { MessageQueue } from './support/message-queue.js';
import { type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { opened, waitFor } from './support/ws-helpers.js';

const TIMEOUT_MS = 3000;

interface LegacyResult {
  readonly data?: Record<string, unknown> | null;
  readonly errors?: readonly { message: string }[];
}

/** Results of one operation through the real subscriptions-transport-ws client, buffered. */
class LegacyOperation {
  private readonly results: LegacyResult[] = [];
  private waiter: ((result: LegacyResult) => void) | null = null;
  failure: unknown = null;
  readonly unsubscribe: () => void;

  constructor(client: SubscriptionClient, query: string, variables?: Record<string, unknown>) {
    const subscription = client
      .request({ query, ...(variables === undefined ? {} : { variables }) })
      .subscribe({
        next: (value) => {
          if (this.waiter === null) return void this.results.push(value as LegacyResult);
          const waiter = this.waiter;
          this.waiter = null;
          waiter(value as LegacyResult);
        },
        error: (err) => {
          this.failure = err;
        },
      });
    this.unsubscribe = () => subscription.unsubscribe();
  }

  next(): Promise<LegacyResult> {
    const value = this.results.shift();
    if (value !== undefined) return Promise.resolve(value);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting for a result')), TIMEOUT_MS);
      this.waiter = (result) => {
        clearTimeout(timer);
        resolve(result);
      };
    });
  }

  async nextEvent(): Promise<Record<string, unknown>> {
    for (;;) {
      const topic = (await this.next()).data?.['topic'] as Record<string, unknown> | undefined;
      if (topic === undefined) throw new Error('not a topic event');
      if (topic['payload'] !== PROBE) return topic;
    }
  }
}

describe('graphql-ws (legacy subscriptions-transport-ws protocol)', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startGraphqlBroker();
  });
  after(() => broker.close());

  function legacyClient(
    path: string,
    connectionParams?: Record<string, unknown>,
    connectionCallback?: (error: unknown) => void,
  ): SubscriptionClient {
    return new SubscriptionClient(
      `${broker.url}${path}`,
      {
        ...(connectionParams === undefined ? {} : { connectionParams }),
        ...(connectionCallback === undefined ? {} : { connectionCallback }),
      },
      WebSocket,
    );
  }

  describe('with the subscriptions-transport-ws client', () => {
    it('a token in connectionParams authenticates; a query answers', async () => {
      const client = legacyClient('/graphql', { token: await signToken({ sub: 'carol' }) });
      const result = await new LegacyOperation(client, '{ status { connections } }').next();
      assert.ok(((result.data?.['status'] as { connections: number }).connections ?? 0) >= 1);
      client.close();
    });

    it('a bad token: the connection callback gets the reason', async () => {
      let refusal: unknown = null;
      const client = legacyClient('/graphql', { token: 'not-a-jwt' }, (error) => (refusal = error));
      await waitFor(() => refusal !== null);
      assert.deepEqual(refusal, { message: 'the token was not accepted: the token is malformed' });
      client.close();
    });

    it('a chat.v1 message on the bus reaches a legacy subscriber', async () => {
      const client = legacyClient('/open');
      const events = new LegacyOperation(
        client,
        'subscription { topic(filter: "chat/legacy") { topic payload origin } }',
      );
      const prober = transportClient(`${broker.url}/open`);
      await untilDelivered(prober, 'chat/legacy');
      const chat = new WebSocket(`${broker.url}/chat`, 'chat.v1');
      const chatQueue = new MessageQueue(chat);
      await opened(chat);
      await chatQueue.json();
      chat.send(JSON.stringify({ type: 'join', room: 'legacy' }));
      await chatQueue.json();
      chat.send(JSON.stringify({ type: 'say', room: 'legacy', text: 'hi old client' }));
      const event = await events.nextEvent();
      assert.equal(event['origin'], 'chat.v1');
      assert.equal((JSON.parse(String(event['payload'])) as { text: string }).text, 'hi old client');
      events.unsubscribe();
      chat.close();
      client.close();
      await prober.dispose();
    });

    it('the publish mutation reaches a graphql-transport-ws subscriber; a validation error reaches the operation', async () => {
      const listener = transportClient(`${broker.url}/open`);
      const events = new Subscription(
        listener,
        'subscription { topic(filter: "legacy/out") { payload publisher } }',
      );
      await untilDelivered(listener, 'legacy/out');
      const client = legacyClient('/graphql', { token: await signToken({ sub: 'dave' }) });
      const published = await new LegacyOperation(
        client,
        'mutation { publish(topic: "legacy/out", payload: "from legacy") }',
      ).next();
      assert.deepEqual(published.data, { publish: 1 });
      assert.deepEqual(await events.nextEvent(), { payload: 'from legacy', publisher: 'dave' });
      const invalid = new LegacyOperation(client, '{ nope }');
      await waitFor(() => invalid.failure !== null);
      assert.match(JSON.stringify(invalid.failure), /Cannot query field \\"nope\\"/);
      events.stop();
      client.close();
      await listener.dispose();
    });
  });
});
