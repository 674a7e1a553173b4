import { type GraphQLSchema } from 'graphql';
import { MAX_TIMER_MS } from '#broker/config';
import { type TopicGrant } from '#broker/auth';
import { type Principal } from '#broker/handshake';
import { type Resolvers } from './schema-from-sdl.js';

/** What both protocols know about a connection once connection_init succeeded. */
export interface GraphqlSession {
  readonly connectionId: string;
  readonly principal: Principal | null;
  /** What the principal may publish and read on the bus: a resolver that touches the bus asks it. */
  readonly topics: TopicGrant;
  /** The connection_init payload, credential fields removed. */
  readonly connectionParams: Readonly<Record<string, unknown>>;
}

/** The contextValue every resolver receives: the session, plus whatever the application's `context` adds. */
export interface GraphqlContext extends GraphqlSession {
  readonly [key: string]: unknown;
}

export interface GraphqlLimits {
  /** Operations (queries, mutations, subscriptions) running at once on one connection; one more closes 4429. */
  readonly maxOperations: number;
  /** Deepest selection set nesting (fragments expanded). */
  readonly maxDepth: number;
  /** Field selections of one operation, fragments expanded each time they are spread. */
  readonly maxComplexity: number;
  /** Lexer tokens of one document: bounds the parser's work before validation even starts. */
  readonly maxTokens: number;
  /** Aliased fields in one document. */
  readonly maxAliases: number;
  /** Selections of one response name in one selection set (graphql-js compares them pairwise). */
  readonly maxRepeatedFields: number;
  /** A connection that has not sent connection_init by then is closed with 4408. */
  readonly initTimeoutMs: number;
  /** Legacy graphql-ws only: the `ka` interval (0: only the one right after the ack). */
  readonly keepAliveMs: number;
  /** Bus events waiting for one subscription to be sent; past it the subscription ends with an error. */
  readonly maxPendingEvents: number;
}

export const DEFAULT_LIMITS: GraphqlLimits = {
  maxOperations: 100,
  maxDepth: 12,
  maxComplexity: 500,
  maxTokens: 5000,
  maxAliases: 100,
  maxRepeatedFields: 10,
  initTimeoutMs: 5000,
  keepAliveMs: 15_000,
  maxPendingEvents: 1000,
};

/** The application's answer to connection_init: refuse, accept, or accept with an ack payload. */
export type ConnectHook = (
  session: GraphqlSession,
) => boolean | Record<string, unknown> | Promise<boolean | Record<string, unknown>>;

export interface GraphqlModuleOptions {
  /** A ready schema; or `typeDefs` with `resolvers`; with neither, the default bus schema. */
  readonly schema?: GraphQLSchema;
  readonly typeDefs?: string;
  readonly resolvers?: Resolvers;
  /** Extra fields for each operation's contextValue (a per-operation object is created from the session). */
  readonly context?: (session: GraphqlSession) => Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Runs after the credential checks on connection_init; false refuses the connection. */
  readonly onConnect?: ConnectHook;
  readonly limits?: Partial<GraphqlLimits>;
}

/** Nest injection token for the GraphqlModuleOptions. */
export const GRAPHQL_OPTIONS = Symbol('GRAPHQL_OPTIONS');

/** The defaults completed by the application's limits; a nonsensical limit stops the boot, naming it. */
export function resolveLimits(limits: Partial<GraphqlLimits> = {}): GraphqlLimits {
  const resolved = { ...DEFAULT_LIMITS, ...limits };
  for (const [key, value] of Object.entries(resolved)) {
    const least = key === 'keepAliveMs' ? 0 : 1;
    // The times are waited for with timers, which wait 1 ms for anything longer than MAX_TIMER_MS.
    const most = key.endsWith('Ms') ? MAX_TIMER_MS : Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(value) || value < least || value > most) {
      const range = most === MAX_TIMER_MS ? `at least ${least} and at most ${most}` : `at least ${least}`;
      throw new Error(`GraphqlModule limits.${key}: must be an integer of ${range}, got ${String(value)}`);
    }
  }
  return resolved;
}
