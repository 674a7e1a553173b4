import { Module } from '@nestjs/common';
import { GraphqlModule } from '#broker/protocols/graphql';
import { DEFAULT_CONFIG } from '../../src/default-config.js';
import { startTestBroker, type TestBroker } from './test-broker.js';

/** The GraphQL module as an application configures it, with small limits and hooks the suites exercise. */
@Module({
  imports: [
    GraphqlModule.forRoot({
      limits: { maxOperations: 3, maxDepth: 4, initTimeoutMs: 500 },
      // Application hooks: one that refuses, one that answers an ack payload, one that fails (4500, not a crash).
      onConnect: (session) =>
        session.connectionParams['refuse'] === true
          ? false
          : { greeting: `hello ${session.principal?.subject ?? 'guest'}` },
      context: (session) => {
        if (session.connectionParams['explode'] === true) throw new Error('context hook failed');
        return {};
      },
    }),
  ],
})
export class GraphqlTestModule {}

const defaults = DEFAULT_CONFIG.endpoints.find((endpoint) => endpoint.path === '/graphql');
if (defaults === undefined) throw new Error('the default configuration has no /graphql endpoint');

/** The /graphql endpoint settings of the default configuration, minus its path. */
export const GRAPHQL_ENDPOINT: Record<string, unknown> = Object.fromEntries(
  Object.entries(defaults).filter(([key]) => key !== 'path'),
);

/**
 * The broker the GraphQL suites share: /graphql requires a credential, /open does not and has a
 * small outbound buffer cap, /chat serves chat.v1 (a module publishing on the bus).
 */
export function startGraphqlBroker(): Promise<TestBroker> {
  return startTestBroker(
    {
      endpoints: [
        { path: '/graphql', ...GRAPHQL_ENDPOINT, auth: { mode: 'required' } },
        { path: '/open', ...GRAPHQL_ENDPOINT, outboundBufferCap: 256 * 1024 },
        { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
      ],
    },
    [GraphqlTestModule],
  );
}
