export { BUS_TYPE_DEFS, busSchema, type BusSchemaDeps } from './bus-schema.js';
export { BusEventStream, type BusEvent } from './bus-event-stream.js';
export { GraphqlEngine, type OperationRequest } from './graphql-engine.js';
export { graphqlConfig } from './graphql-config.js';
export { GraphqlModule, type GraphqlModuleAsyncOptions } from './graphql.module.js';
export {
  DEFAULT_LIMITS,
  GRAPHQL_OPTIONS,
  resolveLimits,
  type ConnectHook,
  type GraphqlContext,
  type GraphqlLimits,
  type GraphqlModuleOptions,
  type GraphqlSession,
} from './graphql.options.js';
export { GraphqlLegacyWsSubprotocol } from './legacy-ws.subprotocol.js';
export {
  schemaFromSdl,
  type FieldResolver,
  type Resolvers,
  type SubscriptionResolver,
} from './schema-from-sdl.js';
export { GRAPHQL_MAX_PAYLOAD, GraphqlTransportWsSubprotocol } from './transport-ws.subprotocol.js';
