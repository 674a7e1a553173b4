import {
  execute,
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  subscribe,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationTypeNode,
  type ValidationRule,
} from 'graphql';
import { authenticateInit, type InitAuthContext } from './connection-auth.js';
import {
  type GraphqlContext,
  type GraphqlLimits,
  type GraphqlModuleOptions,
  type GraphqlSession,
} from './graphql.options.js';
import { operationLimitsRule } from './operation-limits.rule.js';

/** What a client asks to run: the `payload` of a graphql-transport-ws `subscribe` or a legacy `start`. */
export interface OperationRequest {
  readonly query: string;
  readonly variables?: Readonly<Record<string, unknown>> | null;
  readonly operationName?: string | null;
}

export type PreparedOperation =
  | {
      readonly ok: true;
      readonly kind: OperationTypeNode;
      readonly schema: GraphQLSchema;
      readonly document: DocumentNode;
      readonly variableValues: Readonly<Record<string, unknown>> | undefined;
      readonly operationName: string | undefined;
    }
  | { readonly ok: false; readonly errors: readonly GraphQLError[] };

export type ConnectOutcome =
  | {
      readonly ok: true;
      readonly session: GraphqlSession;
      readonly ackPayload: Record<string, unknown> | undefined;
    }
  | { readonly ok: false; readonly reason: string };

export type OperationOutcome = ExecutionResult | AsyncGenerator<ExecutionResult, void, void>;

/**
 * The protocol-independent half of both GraphQL modules: connection_init authentication and the
 * application's hooks, then parse, validate (with the depth and complexity limits) and run.
 */
export class GraphqlEngine {
  private readonly rules: readonly ValidationRule[];

  constructor(
    readonly schema: GraphQLSchema,
    readonly limits: GraphqlLimits,
    private readonly hooks: Pick<GraphqlModuleOptions, 'context' | 'onConnect'> = {},
  ) {
    this.rules = [...specifiedRules, operationLimitsRule(limits.maxDepth, limits.maxComplexity)];
  }

  /** Answers a connection_init: the credential check, then the application's onConnect. */
  async connect(connectionId: string, payload: unknown, context: InitAuthContext): Promise<ConnectOutcome> {
    const auth = await authenticateInit(payload, context);
    if (!auth.ok) return auth;
    const session: GraphqlSession = {
      connectionId,
      principal: auth.principal,
      connectionParams: auth.params,
    };
    const verdict = this.hooks.onConnect === undefined ? true : await this.hooks.onConnect(session);
    if (verdict === false) return { ok: false, reason: 'the application refused the connection' };
    if (auth.principal !== null) context.identify?.(auth.principal);
    return { ok: true, session, ackPayload: verdict === true ? undefined : verdict };
  }

  /** Syntax and validation problems come back as errors for this operation alone. */
  prepare(request: OperationRequest): PreparedOperation {
    let document: DocumentNode;
    try {
      document = parse(request.query, { maxTokens: this.limits.maxTokens });
    } catch (err) {
      if (err instanceof GraphQLError) return { ok: false, errors: [err] };
      throw err;
    }
    const errors = validate(this.schema, document, this.rules);
    if (errors.length > 0) return { ok: false, errors };
    const operationName = request.operationName ?? undefined;
    const operation = getOperationAST(document, operationName);
    if (!operation) {
      const why =
        operationName === undefined
          ? 'the document holds several operations: name one'
          : `no operation named "${operationName}"`;
      return { ok: false, errors: [new GraphQLError(`Unable to identify the operation: ${why}.`)] };
    }
    return {
      ok: true,
      kind: operation.operation,
      schema: this.schema,
      document,
      variableValues: request.variables ?? undefined,
      operationName,
    };
  }

  /** A fresh contextValue per operation: the session plus what the application's `context` adds. */
  async contextFor(session: GraphqlSession): Promise<GraphqlContext> {
    const extra = this.hooks.context === undefined ? {} : await this.hooks.context(session);
    return { ...extra, ...session };
  }

  /** The execution arguments graphql-js wants, for graphql-ws's onSubscribe and the legacy session. */
  async executionArgs(
    prepared: PreparedOperation & { ok: true },
    session: GraphqlSession,
  ): Promise<ExecutionArgs> {
    return {
      schema: prepared.schema,
      document: prepared.document,
      variableValues: prepared.variableValues,
      operationName: prepared.operationName,
      contextValue: await this.contextFor(session),
    };
  }

  /** Runs a prepared operation: a subscription gives a stream (or the errors that prevented it). */
  async run(prepared: PreparedOperation & { ok: true }, session: GraphqlSession): Promise<OperationOutcome> {
    const args = await this.executionArgs(prepared, session);
    return prepared.kind === 'subscription' ? subscribe(args) : execute(args);
  }
}
