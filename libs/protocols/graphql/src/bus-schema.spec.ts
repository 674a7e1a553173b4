import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execute, parse, subscribe, type ExecutionResult } from 'graphql';
import { TopicAuthorizer, TopicGrant } from '#broker/auth';
import { InMemoryTopicBus, type BusMessage } from '#broker/bus';
import { busSchema } from './bus-schema.js';

const alice = { subject: 'alice', claims: { sub: 'alice' }, carrier: 'first-message' as const };

function setup() {
  const bus = new InMemoryTopicBus();
  const schema = busSchema({ bus, connections: () => 7, maxPendingEvents: 10, startedAt: Date.now() - 2000 });
  const contextValue = {
    connectionId: 'c1',
    principal: alice,
    topics: TopicGrant.unrestricted,
    connectionParams: {},
  };
  return { bus, schema, contextValue };
}

describe('busSchema', () => {
  it('status reports connections and uptime', async () => {
    const { schema } = setup();
    const result = (await execute({
      schema,
      document: parse('{ status { connections uptimeSeconds } }'),
    })) as ExecutionResult<{
      status: { connections: number; uptimeSeconds: number };
    }>;
    assert.equal(result.data?.status.connections, 7);
    assert.ok((result.data?.status.uptimeSeconds ?? 0) >= 2);
  });

  it('publish puts the payload on the bus with the publisher and returns the delivery count', async () => {
    const { bus, schema, contextValue } = setup();
    const seen: BusMessage[] = [];
    bus.subscribe('rooms/#', (m) => seen.push(m));
    const result = await execute({
      schema,
      contextValue,
      document: parse('mutation { publish(topic: "rooms/a", payload: "héllo", contentType: "text/plain") }'),
    });
    assert.deepEqual(JSON.parse(JSON.stringify(result)), { data: { publish: 1 } });
    assert.equal(seen.length, 1);
    assert.equal(Buffer.from(seen[0]?.payload ?? []).toString('utf8'), 'héllo');
    assert.equal(seen[0]?.origin, 'graphql');
    assert.equal(seen[0]?.principal, 'alice');
    assert.equal(seen[0]?.contentType, 'text/plain');
  });

  it('publish to an invalid or reserved topic is a GraphQL error with code BAD_TOPIC', async () => {
    const { schema, contextValue } = setup();
    for (const [topic, reason] of [
      ['a/+', /wildcards are only valid in filters/],
      ['', /must not be empty/],
      ['$SYS/x', /reserved/],
    ] as const) {
      const result = await execute({
        schema,
        contextValue,
        document: parse('mutation($t: String!) { publish(topic: $t, payload: "x") }'),
        variableValues: { t: topic },
      });
      assert.equal(result.data, null);
      assert.match(result.errors?.[0]?.message ?? '', reason);
      assert.equal(result.errors?.[0]?.extensions['code'], 'BAD_TOPIC');
    }
  });

  it('topic(filter) streams matching bus messages with every field', async () => {
    const { bus, schema, contextValue } = setup();
    const stream = await subscribe({
      schema,
      contextValue,
      document: parse(
        'subscription { topic(filter: "sensors/+/temp") { topic payload payloadBase64 contentType origin publisher receivedAt } }',
      ),
    });
    assert.ok(Symbol.asyncIterator in stream);
    bus.publish({
      topic: 'sensors/k/temp',
      payload: Buffer.from([0x32, 0x31]),
      origin: 'mqtt',
      principal: 'bob',
    });
    const next = await stream.next();
    const event = (next.value as ExecutionResult<{ topic: Record<string, unknown> }>).data?.topic;
    assert.equal(event?.['topic'], 'sensors/k/temp');
    assert.equal(event?.['payload'], '21');
    assert.equal(event?.['payloadBase64'], 'MjE=');
    assert.equal(event?.['contentType'], null);
    assert.equal(event?.['origin'], 'mqtt');
    assert.equal(event?.['publisher'], 'bob');
    assert.ok(!Number.isNaN(Date.parse(String(event?.['receivedAt']))));
    await stream.return?.(undefined);
    assert.equal(bus.publish({ topic: 'sensors/k/temp', payload: Buffer.from('x'), origin: 'mqtt' }), 0);
  });

  it('an invalid filter is a GraphQL error with code BAD_TOPIC, not a stream', async () => {
    const { schema, contextValue } = setup();
    const result = await subscribe({
      schema,
      contextValue,
      document: parse('subscription { topic(filter: "a/#/b") { topic } }'),
    });
    assert.ok(!(Symbol.asyncIterator in result));
    const errors = (result as ExecutionResult).errors ?? [];
    assert.match(errors[0]?.message ?? '', /Invalid topic filter "a\/#\/b"/);
    assert.equal(errors[0]?.extensions['code'], 'BAD_TOPIC');
  });

  it("asks the principal's grant: FORBIDDEN to publish or subscribe where it may not, and only readable topics stream", async () => {
    const { bus, schema, contextValue } = setup();
    const authorizer = new TopicAuthorizer({
      rules: [{ who: 'all', action: 'all', topics: ['secret/#'], permission: 'deny' }],
      noMatch: 'allow',
    });
    const topics = authorizer.grantFor({ principal: alice, clientId: null });
    const denied = await execute({
      schema,
      contextValue: { ...contextValue, topics },
      document: parse('mutation { publish(topic: "secret/x", payload: "x") }'),
    });
    assert.equal(denied.errors?.[0]?.extensions['code'], 'FORBIDDEN');
    const refused = await subscribe({
      schema,
      contextValue: { ...contextValue, topics },
      document: parse('subscription { topic(filter: "secret/#") { topic } }'),
    });
    assert.equal((refused as ExecutionResult).errors?.[0]?.extensions['code'], 'FORBIDDEN');
    const stream = await subscribe({
      schema,
      contextValue: { ...contextValue, topics },
      document: parse('subscription { topic(filter: "#") { topic } }'),
    });
    assert.ok(Symbol.asyncIterator in stream);
    bus.publish({ topic: 'secret/x', payload: Buffer.from('no'), origin: 'mqtt' });
    bus.publish({ topic: 'public/x', payload: Buffer.from('yes'), origin: 'mqtt' });
    const next = await stream.next();
    assert.equal((next.value as ExecutionResult<{ topic: { topic: string } }>).data?.topic.topic, 'public/x');
    await stream.return?.(undefined);
  });
});
