import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { TopicGrant } from '#broker/auth';
import { InMemoryTopicBus } from '#broker/bus';
import { busSchema, DEFAULT_LIMITS, type GraphqlContext } from '#broker/protocols/graphql';
import { portFromEnv } from '../server-port.js';

/**
 * The reference: graphql-ws's own `useServer` on a bare `ws` server, run as its own process. Its
 * schema is the broker's default bus schema over the same in-memory bus, so both servers run the same
 * resolvers and the benchmark compares what lies around them: the gateway and our adapter against
 * plain graphql-ws.
 */
const port = portFromEnv('graphql-ws-server');

const wss = new WebSocketServer({ host: '127.0.0.1', port, path: '/graphql' });
const schema = busSchema({
  bus: new InMemoryTopicBus(),
  connections: () => wss.clients.size,
  maxPendingEvents: DEFAULT_LIMITS.maxPendingEvents,
});
// The bus schema's resolvers read the principal from the context, as the broker provides it.
const context: GraphqlContext = {
  connectionId: 'reference',
  principal: null,
  topics: TopicGrant.unrestricted,
  connectionParams: {},
};
useServer({ schema, context }, wss);
