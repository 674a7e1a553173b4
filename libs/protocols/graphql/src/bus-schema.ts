import { GraphQLError, type GraphQLSchema } from 'graphql';
import { assertTopicFilter, assertTopicName, InvalidTopicError, type TopicBus } from '#broker/bus';
import { BusEventStream, type BusEvent } from './bus-event-stream.js';
import { type GraphqlContext } from './graphql.options.js';
import { schemaFromSdl } from './schema-from-sdl.js';

export const BUS_TYPE_DEFS = /* GraphQL */ `
  "A message on the broker's topic bus, from any protocol module."
  type BusMessage {
    topic: String!
    "The payload as UTF-8 text (invalid sequences become U+FFFD); see payloadBase64 for binary payloads."
    payload: String!
    payloadBase64: String!
    contentType: String
    "The module that published it: mqtt, graphql, chat.v1, ..."
    origin: String!
    "The publisher's subject, when it was authenticated."
    publisher: String
    "When this subscription received it (ISO 8601)."
    receivedAt: String!
  }

  type BrokerStatus {
    uptimeSeconds: Float!
    "Open WebSocket connections on every endpoint."
    connections: Int!
  }

  type Query {
    status: BrokerStatus!
  }

  type Mutation {
    "Publishes to a bus topic (no wildcards, no leading $); returns how many subscribers received it. FORBIDDEN where the principal may not publish there."
    publish(topic: String!, payload: String!, contentType: String): Int!
  }

  type Subscription {
    "Messages on every topic the MQTT-style filter matches ('+' one level, '#' the rest) that the principal may read. FORBIDDEN where it may read none of them."
    topic(filter: String!): BusMessage!
  }
`;

export interface BusSchemaDeps {
  readonly bus: TopicBus;
  /** Open connections, for the status query. */
  readonly connections: () => number;
  readonly maxPendingEvents: number;
  readonly startedAt?: number;
}

/** The default schema: the bus as GraphQL, so an MQTT publish or a chat message reaches a GraphQL subscriber. */
export function busSchema(deps: BusSchemaDeps): GraphQLSchema {
  const startedAt = deps.startedAt ?? Date.now();
  return schemaFromSdl(BUS_TYPE_DEFS, {
    Query: {
      status: () => ({
        uptimeSeconds: (Date.now() - startedAt) / 1000,
        connections: deps.connections(),
      }),
    },
    Mutation: {
      publish: (
        _source: unknown,
        args: { topic: string; payload: string; contentType?: string | null },
        context: GraphqlContext,
      ) => {
        checkTopic(() => assertTopicName(args.topic));
        if (args.topic.startsWith('$')) {
          throw new GraphQLError(
            `Topic ${JSON.stringify(args.topic)} is reserved: topics starting with $ belong to the broker`,
            {
              extensions: { code: 'BAD_TOPIC' },
            },
          );
        }
        if (!context.topics.mayPublish(args.topic))
          throw forbidden(`publish to ${JSON.stringify(args.topic)}`);
        return deps.bus.publish({
          topic: args.topic,
          payload: Buffer.from(args.payload, 'utf8'),
          ...(args.contentType === null || args.contentType === undefined
            ? {}
            : { contentType: args.contentType }),
          origin: 'graphql',
          principal: context.principal?.subject ?? null,
        });
      },
    },
    Subscription: {
      topic: {
        subscribe: (_source: unknown, args: { filter: string }, context: GraphqlContext) => {
          checkTopic(() => assertTopicFilter(args.filter));
          const { topics } = context;
          if (!topics.maySubscribe(args.filter))
            throw forbidden(`subscribe to ${JSON.stringify(args.filter)}`);
          // A filter a topic rule cuts through gets only the messages whose topics the principal may read.
          const reads = topics.checksReads ? (topic: string) => topics.mayRead(topic) : null;
          return new BusEventStream(deps.bus, args.filter, deps.maxPendingEvents, reads);
        },
        resolve: (event: BusEvent) => event,
      },
    },
    BusMessage: {
      topic: (event: BusEvent) => event.message.topic,
      payload: (event: BusEvent) => Buffer.from(event.message.payload).toString('utf8'),
      payloadBase64: (event: BusEvent) => Buffer.from(event.message.payload).toString('base64'),
      contentType: (event: BusEvent) => event.message.contentType ?? null,
      origin: (event: BusEvent) => event.message.origin,
      publisher: (event: BusEvent) => event.message.principal ?? null,
      receivedAt: (event: BusEvent) => event.receivedAt.toISOString(),
    },
  });
}

/** The authorizer's refusal (scopes or `authorization` rules), with a code a client can branch on. */
function forbidden(what: string): GraphQLError {
  return new GraphQLError(`Not authorized to ${what}`, { extensions: { code: 'FORBIDDEN' } });
}

/** Bus errors become GraphQL errors with a code a client can branch on. */
function checkTopic(check: () => void): void {
  try {
    check();
  } catch (err) {
    if (err instanceof InvalidTopicError)
      throw new GraphQLError(err.message, { extensions: { code: 'BAD_TOPIC' } });
    throw err;
  }
}
