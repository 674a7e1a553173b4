import {
  type DynamicModule,
  type FactoryProvider,
  Module,
  type ModuleMetadata,
  type Provider,
} from '@nestjs/common';
import { TopicAuthorizer } from '#broker/auth';
import { TOPIC_BUS, type TopicBus } from '#broker/bus';
import { type BrokerConfig, BrokerSection } from '#broker/config';
import { BROKER_CONFIG, ConnectionRegistry } from '#broker/gateway';
import { busSchema } from './bus-schema.js';
import { graphqlConfig } from './graphql-config.js';
import { GraphqlEngine } from './graphql-engine.js';
import {
  GRAPHQL_OPTIONS,
  resolveLimits,
  type GraphqlLimits,
  type GraphqlModuleOptions,
} from './graphql.options.js';
import { GraphqlLegacyWsSubprotocol } from './legacy-ws.subprotocol.js';
import { schemaFromSdl } from './schema-from-sdl.js';
import { GraphqlTransportWsSubprotocol } from './transport-ws.subprotocol.js';

export interface GraphqlModuleAsyncOptions {
  readonly imports?: ModuleMetadata['imports'];
  /** Providers the factory needs (an application's services for its resolvers). */
  readonly inject?: FactoryProvider['inject'];
  readonly useFactory: (...deps: never[]) => GraphqlModuleOptions | Promise<GraphqlModuleOptions>;
}

/**
 * Both GraphQL subprotocols over one engine. `forRoot()` with no schema serves the default bus
 * schema; `forRootAsync` lets resolvers depend on the application's Nest providers.
 */
@BrokerSection(graphqlConfig)
@Module({})
export class GraphqlModule {
  static forRoot(options: GraphqlModuleOptions = {}): DynamicModule {
    return GraphqlModule.build([], { provide: GRAPHQL_OPTIONS, useValue: options });
  }

  static forRootAsync(options: GraphqlModuleAsyncOptions): DynamicModule {
    return GraphqlModule.build(options.imports ?? [], {
      provide: GRAPHQL_OPTIONS,
      inject: options.inject ?? [],
      useFactory: options.useFactory as (...deps: unknown[]) => GraphqlModuleOptions,
    });
  }

  private static build(
    imports: NonNullable<ModuleMetadata['imports']>,
    optionsProvider: Provider,
  ): DynamicModule {
    return {
      module: GraphqlModule,
      imports,
      providers: [
        optionsProvider,
        {
          provide: GraphqlEngine,
          inject: [GRAPHQL_OPTIONS, TOPIC_BUS, ConnectionRegistry, BROKER_CONFIG, TopicAuthorizer],
          useFactory: (
            options: GraphqlModuleOptions,
            bus: TopicBus,
            connections: ConnectionRegistry,
            config: BrokerConfig,
            authorizer: TopicAuthorizer,
          ) => createEngine(options, bus, connections, graphqlConfig.of(config).limits, authorizer),
        },
        GraphqlTransportWsSubprotocol,
        GraphqlLegacyWsSubprotocol,
      ],
      exports: [GraphqlEngine],
    };
  }
}

/** Limits: the defaults, then the application's, then the operator's configuration (`graphql.limits`). */
function createEngine(
  options: GraphqlModuleOptions,
  bus: TopicBus,
  connections: ConnectionRegistry,
  configured: Partial<GraphqlLimits>,
  authorizer: TopicAuthorizer,
): GraphqlEngine {
  const given = Object.entries(configured).filter(([, value]) => value !== undefined);
  const limits = resolveLimits({ ...options.limits, ...Object.fromEntries(given) });
  if (options.schema !== undefined && options.typeDefs !== undefined) {
    throw new Error('GraphqlModule: give either schema or typeDefs (with resolvers), not both');
  }
  if (options.resolvers !== undefined && options.typeDefs === undefined) {
    throw new Error('GraphqlModule: resolvers need typeDefs (a schema option already holds its resolvers)');
  }
  const schema =
    options.schema ??
    (options.typeDefs === undefined
      ? busSchema({ bus, connections: () => connections.open(), maxPendingEvents: limits.maxPendingEvents })
      : schemaFromSdl(options.typeDefs, options.resolvers));
  return new GraphqlEngine(schema, limits, authorizer, options);
}
