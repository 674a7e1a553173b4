import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type GraphQLSchema } from 'graphql';
import { TopicAuthorizer } from '#broker/auth';
import { InMemoryTopicBus } from '#broker/bus';
import { CredentialError, type Principal } from '#broker/handshake';
import { busSchema } from './bus-schema.js';
import { schemaFromSdl } from './schema-from-sdl.js';
import { GraphqlEngine } from './graphql-engine.js';
import { DEFAULT_LIMITS, type GraphqlLimits, type GraphqlModuleOptions } from './graphql.options.js';
import { type LegacyServerMessage } from './legacy-message.js';
import { LegacyGraphqlSession } from './legacy-session.js';
import { authenticateFirstMessage } from '#broker/gateway';
import { type HoldLimits, ManualClock } from '#broker/kit';

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function setup(
  options: {
    schema?: GraphQLSchema;
    limits?: Partial<GraphqlLimits>;
    hooks?: GraphqlModuleOptions;
    authMode?: 'none' | 'required';
    holdLimits?: Partial<HoldLimits>;
    verifyToken?: (token: string) => Promise<Principal>;
    timeoutMs?: number;
  } = {},
) {
  const bus = new InMemoryTopicBus();
  const limits = { ...DEFAULT_LIMITS, initTimeoutMs: 1000, keepAliveMs: 500, ...options.limits };
  const schema = options.schema ?? busSchema({ bus, connections: () => 1, maxPendingEvents: 5 });
  const engine = new GraphqlEngine(
    schema,
    limits,
    new TopicAuthorizer({ rules: [], noMatch: 'allow' }),
    options.hooks,
  );
  const sent: LegacyServerMessage[] = [];
  const closes: [number, string][] = [];
  const failures: unknown[] = [];
  const clock = new ManualClock();
  const authMode = options.authMode ?? 'none';
  const checks = {
    verifyToken:
      options.verifyToken ??
      (async (token: string): Promise<Principal> => {
        if (token === 'good') return { subject: 'alice', claims: { sub: 'alice' }, carrier: 'first-message' };
        throw new CredentialError('the signature is invalid');
      }),
    passwords: null,
  };
  const endpoint = { mode: authMode, path: '/graphql', timeoutMs: options.timeoutMs ?? 5000 };
  const session = new LegacyGraphqlSession(
    engine,
    {
      id: 'conn-1',
      authMode,
      holdLimits: { maxQueued: 16, maxBytes: 8192, ...options.holdLimits },
      authenticate: (credential) => authenticateFirstMessage(credential, null, endpoint, checks),
    },
    {
      send: (text) => sent.push(JSON.parse(text) as LegacyServerMessage),
      sendEvent: (text) => sent.push(JSON.parse(text) as LegacyServerMessage),
      close: (c, r) => closes.push([c, r]),
    },
    clock,
    (e) => failures.push(e),
  );
  const send = (message: unknown): void => session.receive(JSON.stringify(message));
  const take = (): LegacyServerMessage[] => sent.splice(0);
  return { bus, session, send, take, closes, failures, clock };
}

const SUBSCRIBE = { query: 'subscription { topic(filter: "t/#") { topic payload } }' };

async function ready(t: ReturnType<typeof setup>): Promise<void> {
  t.send({ type: 'connection_init' });
  await tick();
  assert.deepEqual(t.take(), [{ type: 'connection_ack' }, { type: 'ka' }]);
}

describe('LegacyGraphqlSession', () => {
  it('init -> ack and ka at once, then ka every keepAliveMs', async () => {
    const t = setup();
    await ready(t);
    t.clock.advance(500);
    t.clock.advance(500);
    assert.deepEqual(t.take(), [{ type: 'ka' }, { type: 'ka' }]);
  });

  it('start runs a query: data then complete', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'start', id: 'q', payload: { query: '{ status { connections } }' } });
    await tick();
    assert.deepEqual(t.take(), [
      { type: 'data', id: 'q', payload: { data: { status: { connections: 1 } } } },
      { type: 'complete', id: 'q' },
    ]);
  });

  it('a subscription streams bus messages; stop ends it with complete and unsubscribes', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'start', id: 's', payload: SUBSCRIBE });
    await tick();
    t.bus.publish({ topic: 't/1', payload: Buffer.from('hi'), origin: 'test' });
    await tick();
    assert.deepEqual(t.take(), [
      { type: 'data', id: 's', payload: { data: { topic: { topic: 't/1', payload: 'hi' } } } },
    ]);
    t.send({ type: 'stop', id: 's' });
    await tick();
    assert.deepEqual(t.take(), [{ type: 'complete', id: 's' }]);
    assert.equal(t.bus.publish({ topic: 't/1', payload: Buffer.from('hi'), origin: 'test' }), 0);
    assert.equal(t.session.operationCount, 0);
  });

  it('never executes a start before connection_init: the start gets an error and nothing runs', async () => {
    const t = setup();
    t.send({
      type: 'start',
      id: 'early',
      payload: { query: 'mutation { publish(topic: "t/x", payload: "p") }' },
    });
    const heard: string[] = [];
    t.bus.subscribe('t/#', (m) => heard.push(m.topic));
    await tick();
    assert.deepEqual(t.take(), [
      {
        type: 'error',
        id: 'early',
        payload: {
          message: 'Send connection_init first: no operation runs before the connection is acknowledged',
        },
      },
    ]);
    assert.deepEqual(heard, []);
  });

  it('a start during an async connection_init waits for the ack; dropped when the init is refused', async () => {
    let admit!: (verdict: boolean) => void;
    const hooks: GraphqlModuleOptions = {
      onConnect: () => new Promise<boolean>((resolve) => (admit = resolve)),
    };
    const accepted = setup({ hooks });
    accepted.send({ type: 'connection_init' });
    accepted.send({ type: 'start', id: 'q', payload: { query: '{ status { connections } }' } });
    await tick();
    assert.deepEqual(accepted.take(), []);
    admit(true);
    await tick();
    await tick();
    assert.deepEqual(
      accepted.take().map((m) => m.type),
      ['connection_ack', 'ka', 'data', 'complete'],
    );

    const refused = setup({ hooks });
    refused.send({ type: 'connection_init' });
    refused.send({
      type: 'start',
      id: 'm',
      payload: { query: 'mutation { publish(topic: "t/x", payload: "p") }' },
    });
    const heard: string[] = [];
    refused.bus.subscribe('t/#', (m) => heard.push(m.topic));
    await tick();
    admit(false);
    await tick();
    await tick();
    assert.deepEqual(refused.take(), [
      { type: 'connection_error', payload: { message: 'the application refused the connection' } },
    ]);
    assert.deepEqual(refused.closes, [[1011, 'the application refused the connection']]);
    assert.deepEqual(heard, []);
  });

  it('a flood during an async connection_init is refused past the endpoint limits: connection_error, then 1008', async () => {
    let admit!: (verdict: boolean) => void;
    const t = setup({
      hooks: { onConnect: () => new Promise<boolean>((resolve) => (admit = resolve)) },
      holdLimits: { maxQueued: 2 },
    });
    t.send({ type: 'connection_init' });
    for (const id of ['a', 'b', 'c']) {
      t.send({ type: 'start', id, payload: { query: '{ status { connections } }' } });
    }
    const why = 'too many messages before authentication';
    assert.deepEqual(t.take(), [{ type: 'connection_error', payload: { message: why } }]);
    assert.deepEqual(t.closes, [[1008, why]]);
    await tick();
    admit(true);
    await tick();
    assert.deepEqual(t.take(), [], 'nothing held runs after the close');
  });

  it('a credential check that never finishes is refused at the endpoint timeout: connection_error, then 1011', async () => {
    const t = setup({ authMode: 'required', verifyToken: () => new Promise(() => undefined), timeoutMs: 30 });
    t.send({ type: 'connection_init', payload: { token: 'never-checked' } });
    t.send({ type: 'start', id: 'q', payload: { query: '{ status { connections } }' } });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const why = 'the credential check did not finish in time';
    assert.deepEqual(t.take(), [{ type: 'connection_error', payload: { message: why } }]);
    assert.deepEqual(t.closes, [[1011, why]]);
  });

  it('a bad token: connection_error with the reason, then close 1011', async () => {
    const t = setup({ authMode: 'required' });
    t.send({ type: 'connection_init', payload: { token: 'forged' } });
    await tick();
    assert.deepEqual(t.take(), [
      {
        type: 'connection_error',
        payload: { message: 'the token was not accepted: the signature is invalid' },
      },
    ]);
    assert.deepEqual(t.closes, [[1011, 'the token was not accepted: the signature is invalid']]);
  });

  it('a duplicate id replaces the running operation without completing the new one', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'start', id: 's', payload: SUBSCRIBE });
    await tick();
    t.send({ type: 'start', id: 's', payload: { query: 'subscription { topic(filter: "u/#") { topic } }' } });
    await tick();
    assert.equal(t.bus.publish({ topic: 't/1', payload: Buffer.from('old'), origin: 'test' }), 0);
    t.bus.publish({ topic: 'u/1', payload: Buffer.from('new'), origin: 'test' });
    await tick();
    assert.deepEqual(t.take(), [{ type: 'data', id: 's', payload: { data: { topic: { topic: 'u/1' } } } }]);
    assert.equal(t.session.operationCount, 1);
  });

  it('validation, syntax, depth and unknown-operation problems answer error for that operation only', async () => {
    const t = setup({ limits: { maxDepth: 2 } });
    await ready(t);
    t.send({ type: 'start', id: 's', payload: SUBSCRIBE });
    for (const [id, query] of [
      ['v', '{ nope }'],
      ['x', '{ status {'],
      ['d', 'subscription S { topic(filter: "a") { topic } } query Q { status { connections } }'],
    ]) {
      t.send({ type: 'start', id, payload: { query } });
    }
    await tick();
    const errors = t.take();
    assert.deepEqual(
      errors.map((m) => [m.type, 'id' in m ? m.id : null]),
      [
        ['error', 'v'],
        ['error', 'x'],
        ['error', 'd'],
      ],
    );
    assert.match(JSON.stringify(errors[0]), /Cannot query field \\"nope\\" on type \\"Query\\"/);
    assert.match(JSON.stringify(errors[1]), /Syntax Error/);
    assert.match(JSON.stringify(errors[2]), /several operations: name one/);
    t.send({ type: 'start', id: 'deep', payload: { query: '{ __schema { types { fields { name } } } }' } });
    const [deep] = t.take();
    assert.match(JSON.stringify(deep), /nested 4 levels deep; at most 2/);
    t.bus.publish({ topic: 't/still', payload: Buffer.from('x'), origin: 'test' });
    await tick();
    assert.deepEqual(t.take(), [
      { type: 'data', id: 's', payload: { data: { topic: { topic: 't/still', payload: 'x' } } } },
    ]);
  });

  it('too many operations closes 4429 with a reason and ends every operation', async () => {
    const t = setup({ limits: { maxOperations: 2 } });
    await ready(t);
    t.send({ type: 'start', id: 'a', payload: SUBSCRIBE });
    t.send({ type: 'start', id: 'b', payload: SUBSCRIBE });
    await tick();
    t.send({ type: 'start', id: 'c', payload: SUBSCRIBE });
    assert.deepEqual(t.closes, [[4429, 'Too many operations: at most 2 at once on one connection']]);
    assert.equal(t.bus.publish({ topic: 't/1', payload: Buffer.from('x'), origin: 'test' }), 0);
  });

  it('bad messages get connection_error (or error for their operation) and the session goes on', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'subscribe', id: '1' });
    t.session.receive('not json');
    t.send({ type: 'start', id: '9', payload: { query: 5 } });
    t.send({ type: 'connection_init' });
    assert.deepEqual(t.take(), [
      {
        type: 'connection_error',
        payload: {
          message:
            'Invalid message: unknown type "subscribe" (expected one of connection_init, start, stop, connection_terminate)',
        },
      },
      { type: 'connection_error', payload: { message: 'Invalid message: not JSON' } },
      { type: 'error', id: '9', payload: { message: 'Invalid start: payload.query must be a string' } },
      {
        type: 'connection_error',
        payload: { message: 'connection_init was already received on this connection' },
      },
    ]);
    assert.deepEqual(t.closes, []);
  });

  it('init timeout closes 4408; an init in time cancels it', async () => {
    const late = setup();
    late.clock.advance(1000);
    assert.deepEqual(late.closes, [[4408, 'Connection initialisation timeout']]);
    const prompt = setup();
    await ready(prompt);
    prompt.clock.advance(1000);
    assert.deepEqual(prompt.closes, []);
  });

  it('connection_terminate closes 1000; after close no timer is left and nothing is sent', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'start', id: 's', payload: SUBSCRIBE });
    await tick();
    t.send({ type: 'connection_terminate' });
    assert.deepEqual(t.closes, [[1000, 'connection_terminate']]);
    assert.equal(t.clock.pending, 0);
    assert.equal(t.bus.publish({ topic: 't/1', payload: Buffer.from('x'), origin: 'test' }), 0);
    t.send({ type: 'start', id: 'late', payload: SUBSCRIBE });
    await tick();
    assert.deepEqual(t.take(), []);
  });

  it('a subscriber that falls behind gets an error for that subscription', async () => {
    const t = setup();
    await ready(t);
    t.send({ type: 'start', id: 's', payload: SUBSCRIBE });
    await tick();
    for (let i = 0; i < 10; i++)
      t.bus.publish({ topic: 't/1', payload: Buffer.from(String(i)), origin: 'test' });
    for (let i = 0; i < 5; i++) await tick();
    const messages = t.take();
    assert.deepEqual(messages.at(-1), {
      type: 'error',
      id: 's',
      payload: { message: 'more than 5 events waiting: the subscriber is too slow' },
    });
    assert.equal(t.session.operationCount, 0);
  });

  it('an application stream whose return() rejects is reported, never left unhandled', async () => {
    const stubborn: AsyncGenerator<number> = {
      next: () => new Promise<IteratorResult<number>>(() => undefined),
      return: () => Promise.reject(new Error('cannot stop')),
      throw: (err: unknown) => Promise.reject(err instanceof Error ? err : new Error(String(err))),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
    const schema = schemaFromSdl('type Query { a: Int } type Subscription { n: Int }', {
      Subscription: { n: { subscribe: () => stubborn, resolve: (n: number) => n } },
    });
    const t = setup({ schema });
    await ready(t);
    t.send({ type: 'start', id: 's', payload: { query: 'subscription { n }' } });
    await tick();
    t.send({ type: 'stop', id: 's' });
    await tick();
    assert.deepEqual(t.take(), [{ type: 'complete', id: 's' }]);
    assert.match(String(t.failures[0]), /cannot stop/);
  });
});
