import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema } from 'graphql';
import { TopicAuthorizer, TopicGrant } from '#broker/auth';
import { GraphqlEngine } from './graphql-engine.js';
import { DEFAULT_LIMITS, type GraphqlModuleOptions } from './graphql.options.js';

const schema = buildSchema('type Query { a: Int, b: Int } type Mutation { m: Int }');
// On a 'none' endpoint connection_init is not read for a credential: the policy is never asked.
const anonymous = {
  authMode: 'none' as const,
  authenticate: () => Promise.reject(new Error('unused')),
};

const OPEN = new TopicAuthorizer({ rules: [], noMatch: 'allow' });

function engine(hooks: GraphqlModuleOptions = {}, maxTokens = DEFAULT_LIMITS.maxTokens): GraphqlEngine {
  return new GraphqlEngine(schema, { ...DEFAULT_LIMITS, maxTokens }, OPEN, hooks);
}

describe('GraphqlEngine.prepare', () => {
  it('gives the operation kind and the execution inputs', () => {
    const prepared = engine().prepare({
      query: 'query Q { a } mutation M { m }',
      operationName: 'M',
      variables: null,
    });
    assert.ok(prepared.ok);
    assert.equal(prepared.kind, 'mutation');
    assert.equal(prepared.operationName, 'M');
    assert.equal(prepared.variableValues, undefined);
  });

  it('the limits run before the specified rules: 600 aliased copies of one field are refused for their size and repetition alone', () => {
    const prepared = engine().prepare({ query: `{ ${'x: a '.repeat(600)} }` });
    assert.ok(!prepared.ok);
    assert.deepEqual(
      prepared.errors.map((e) => e.message),
      [
        'The operation selects 600 fields; at most 500 are allowed.',
        'The document selects "x" more than 10 times in one selection set.',
      ],
    );
  });

  it('a document is parsed and validated once: the same text again gets the same verdict, without the work', () => {
    const shared = engine();
    const first = shared.prepare({ query: '{ a b c }' });
    const again = shared.prepare({ query: '{ a b c }' });
    assert.ok(!first.ok && !again.ok);
    assert.equal(first.errors[0], again.errors[0], 'the very same error object: remembered, not rebuilt');
    const ok1 = shared.prepare({ query: '{ a }' });
    const ok2 = shared.prepare({ query: '{ a }', variables: { v: 1 } });
    assert.ok(ok1.ok && ok2.ok);
    assert.equal(ok1.document, ok2.document);
    assert.deepEqual(ok2.variableValues, { v: 1 });
  });

  it('the remembered documents are bounded in size: none over 16 KiB, and 512 KiB of text in all', () => {
    const shared = engine();
    // Whitespace is no token: large documents within maxTokens, as an attacker's unique ones were.
    const large = `{ a${' '.repeat(20 * 1024)} }`;
    const first = shared.prepare({ query: large });
    const second = shared.prepare({ query: large });
    assert.ok(first.ok && second.ok);
    assert.notEqual(first.document, second.document, 'a document over 16 KiB is not kept');
    const text = (i: number) => `{ a${' '.repeat(15 * 1024)}${i} }`.replace(`${i} }`, ` } # ${i}`);
    const documents = Array.from({ length: 40 }, (_, i) => shared.prepare({ query: text(i) }));
    assert.ok(documents.every((d) => d.ok));
    const oldest = shared.prepare({ query: text(0) });
    const newest = shared.prepare({ query: text(39) });
    assert.ok(oldest.ok && newest.ok && documents[0]?.ok && documents[39]?.ok);
    assert.notEqual(oldest.document, documents[0].document, 'the oldest went to make room');
    assert.equal(newest.document, documents[39].document, 'the newest is kept');
  });

  it('a document over maxTokens is refused by the parser', () => {
    const prepared = engine({}, 10).prepare({ query: '{ a b a b a b a b a b a b }' });
    assert.ok(!prepared.ok);
    assert.match(prepared.errors[0]?.message ?? '', /Document contains more that 10 tokens/);
  });

  it('an unknown operation name or an unnamed choice is an error for that operation', () => {
    const named = engine().prepare({ query: 'query Q { a }', operationName: 'Nope' });
    assert.ok(!named.ok);
    assert.equal(named.errors[0]?.message, 'Unable to identify the operation: no operation named "Nope".');
    const unnamed = engine().prepare({ query: 'query Q { a } query R { b }' });
    assert.ok(!unnamed.ok);
    assert.match(unnamed.errors[0]?.message ?? '', /several operations: name one/);
  });
});

describe('GraphqlEngine.connect and contextFor', () => {
  it('onConnect false refuses; an object becomes the ack payload; true acks without one', async () => {
    assert.deepEqual(await engine({ onConnect: () => false }).connect('c', {}, anonymous), {
      ok: false,
      reason: 'the application refused the connection',
    });
    const withPayload = await engine({ onConnect: async () => ({ motd: 'hi' }) }).connect(
      'c',
      { x: 1 },
      anonymous,
    );
    assert.deepEqual(withPayload, {
      ok: true,
      session: {
        connectionId: 'c',
        principal: null,
        topics: TopicGrant.unrestricted,
        connectionParams: { x: 1 },
      },
      ackPayload: { motd: 'hi' },
    });
    const plain = await engine().connect('c', undefined, anonymous);
    assert.ok(plain.ok);
    assert.equal(plain.ackPayload, undefined);
  });

  it("the application's context cannot overwrite the session's principal", async () => {
    const forged = engine({ context: () => ({ principal: { subject: 'root' }, extra: 1 }) });
    const topics = TopicGrant.unrestricted;
    const context = await forged.contextFor({
      connectionId: 'c',
      principal: null,
      topics,
      connectionParams: {},
    });
    assert.deepEqual(context, { extra: 1, connectionId: 'c', principal: null, topics, connectionParams: {} });
  });
});
