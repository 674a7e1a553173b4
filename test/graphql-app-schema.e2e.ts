import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Injectable, Module } from '@nestjs/common';
import { GraphqlModule, type GraphqlContext } from '#broker/protocols/graphql';
import { request, transportClient } from './support/graphql-clients.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';

/** An application service that resolvers depend on, provided by the application's own Nest module. */
@Injectable()
class GreetingService {
  greet(name: string): string {
    return `hello ${name}`;
  }
}

@Module({ providers: [GreetingService], exports: [GreetingService] })
class GreetingModule {}

@Module({
  imports: [
    GraphqlModule.forRootAsync({
      imports: [GreetingModule],
      inject: [GreetingService],
      useFactory: (greetings: GreetingService) => ({
        typeDefs: 'type Query { greet(name: String!): String!, whoami: String! }',
        resolvers: {
          Query: {
            greet: (_source: unknown, args: { name: string }) => greetings.greet(args.name),
            whoami: (_source: unknown, _args: unknown, context: GraphqlContext) =>
              `${context.principal?.subject ?? 'anonymous'} via ${String(context['tenant'])}`,
          },
        },
        context: (session) => ({ tenant: session.connectionParams['tenant'] ?? 'none' }),
      }),
    }),
  ],
})
class AppSchemaModule {}

describe('GraphQL with an application schema (forRootAsync, Nest providers as resolver dependencies)', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [
          {
            path: '/graphql',
            subprotocols: ['graphql-transport-ws', 'graphql-ws'],
            defaultModule: 'graphql-transport-ws',
            auth: { mode: 'optional' },
          },
        ],
      },
      [AppSchemaModule],
    );
  });
  after(() => broker.close());

  it("resolvers use the injected service and the context hook's fields; the principal comes from connection_init", async () => {
    const client = transportClient(`${broker.url}/graphql`, {
      token: await signToken({ sub: 'frank' }),
      tenant: 'acme',
    });
    const result = await request(client, '{ greet(name: "nest") whoami }');
    assert.deepEqual(result.data, { greet: 'hello nest', whoami: 'frank via acme' });
    await client.dispose();
  });

  it('the application schema replaces the bus schema', async () => {
    const client = transportClient(`${broker.url}/graphql`);
    const failure = (await request(client, '{ status { connections } }').then(
      () => assert.fail('the bus schema is still served'),
      (e: unknown) => e,
    )) as { detail?: { message: string }[] };
    assert.match(String(failure.detail?.[0]?.message), /Cannot query field "status"/);
    assert.deepEqual((await request(client, '{ whoami }')).data, { whoami: 'anonymous via none' });
    await client.dispose();
  });
});
