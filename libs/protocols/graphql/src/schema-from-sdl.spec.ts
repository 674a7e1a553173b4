import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { graphql, parse, subscribe } from 'graphql';
import { schemaFromSdl } from './schema-from-sdl.js';

/** graphql-js results have null prototypes; compare their JSON. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

const typeDefs = `
  type Query { hello(name: String!): String!, plain: String }
  type Subscription { ticks: Int! }
`;

describe('schemaFromSdl', () => {
  it('attaches field resolvers and subscription subscribe/resolve', async () => {
    const schema = schemaFromSdl(typeDefs, {
      Query: { hello: (_source: unknown, args: { name: string }) => `hello ${args.name}` },
      Subscription: {
        ticks: {
          subscribe: async function* () {
            yield 1;
            yield 2;
          },
          resolve: (event: number) => event * 10,
        },
      },
    });
    assert.deepEqual(plain((await graphql({ schema, source: '{ hello(name: "bob") plain }' })).data), {
      hello: 'hello bob',
      plain: null,
    });
    const stream = await subscribe({ schema, document: parse('subscription { ticks }') });
    assert.ok(Symbol.asyncIterator in stream);
    const seen: unknown[] = [];
    for await (const result of stream) seen.push(plain(result.data));
    assert.deepEqual(seen, [{ ticks: 10 }, { ticks: 20 }]);
  });

  it('refuses a resolver for an unknown type or field, naming it', () => {
    assert.throws(
      () => schemaFromSdl(typeDefs, { Mutation: { x: () => 1 } }),
      /resolvers\.Mutation: .*no object type/,
    );
    assert.throws(
      () => schemaFromSdl(typeDefs, { Query: { helo: () => 1 } }),
      /resolvers\.Query\.helo: Query has no field helo/,
    );
  });

  it('refuses invalid SDL', () => {
    assert.throws(() => schemaFromSdl('type Query { x: Missing }'), /Unknown type "Missing"/);
  });
});
