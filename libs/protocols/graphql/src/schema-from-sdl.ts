import {
  assertValidSchema,
  buildSchema,
  isObjectType,
  type GraphQLFieldResolver,
  type GraphQLSchema,
} from 'graphql';

// Source and context are `never` so resolvers may declare the precise types they rely on.
export type FieldResolver = GraphQLFieldResolver<never, never>;

/** A subscription field: `subscribe` returns the event stream, `resolve` maps each event (default: the event). */
export interface SubscriptionResolver {
  readonly subscribe: GraphQLFieldResolver<never, never>;
  readonly resolve?: GraphQLFieldResolver<never, never>;
}

/** typeName -> fieldName -> resolver, as in graphql-tools, without the dependency. */
export type Resolvers = Readonly<
  Record<string, Readonly<Record<string, FieldResolver | SubscriptionResolver>>>
>;

/**
 * Builds an executable schema from SDL and a resolver map. A resolver for a type or field the SDL
 * does not define stops the boot: a typo would otherwise silently serve nulls.
 */
export function schemaFromSdl(typeDefs: string, resolvers: Resolvers = {}): GraphQLSchema {
  const schema = buildSchema(typeDefs);
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName);
    if (!isObjectType(type))
      throw new Error(`resolvers.${typeName}: typeDefs define no object type ${typeName}`);
    const defined = type.getFields();
    for (const [fieldName, resolver] of Object.entries(fields)) {
      const field = defined[fieldName];
      if (field === undefined) {
        throw new Error(`resolvers.${typeName}.${fieldName}: ${typeName} has no field ${fieldName}`);
      }
      if (typeof resolver === 'function') {
        field.resolve = resolver as GraphQLFieldResolver<unknown, unknown>;
      } else {
        field.subscribe = resolver.subscribe as GraphQLFieldResolver<unknown, unknown>;
        if (resolver.resolve !== undefined)
          field.resolve = resolver.resolve as GraphQLFieldResolver<unknown, unknown>;
      }
    }
  }
  assertValidSchema(schema);
  return schema;
}
