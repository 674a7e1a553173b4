import { createHash } from 'node:crypto';
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
import { type TopicAuthorizer } from '#broker/auth';
import { authenticateInit, type InitAuthContext } from './connection-auth.js';
import {
  type GraphqlContext,
  type GraphqlLimits,
  type GraphqlModuleOptions,
  type GraphqlSession,
} from './graphql.options.js';
import { nestingDepth } from './document-nesting.js';
import { operationLimitsRule } from './operation-limits.rule.js';
import { repetitionLimitsRule } from './repetition-limits.rule.js';

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
/** Documents whose parse and validation are remembered, by their text (most recently used kept). */
const VALIDATED_DOCUMENTS = 256;
/**
 * ...and at most this much of their text in all, none over `MAX_KEPT_DOCUMENT`: a parsed document
 * holds about 65 times its text (1.7 MB for 26 KB), so 256 unique large ones held 430 MB.
 */
const MAX_KEPT_TEXT = 512 * 1024;
const MAX_KEPT_DOCUMENT = 16 * 1024;

/**
 * How deep a document's brackets may nest before it is parsed. Far above what a selection within
 * `maxDepth` with list arguments needs, far below what overflows graphql-js's recursive parser.
 */
const MAX_NESTING = 128;

type Checked = { readonly document: DocumentNode } | { readonly errors: readonly GraphQLError[] };

export class GraphqlEngine {
  /** The cheap limits (depth, fields): they run first, so a costly document is refused before the quadratic rules. */
  private readonly limitRules: readonly ValidationRule[];
  private readonly checked = new Map<string, Checked>();
  /** The text length of the documents in `checked`. */
  private keptText = 0;

  constructor(
    readonly schema: GraphQLSchema,
    readonly limits: GraphqlLimits,
    private readonly authorizer: TopicAuthorizer,
    private readonly hooks: Pick<GraphqlModuleOptions, 'context' | 'onConnect'> = {},
  ) {
    this.limitRules = [
      operationLimitsRule(limits.maxDepth, limits.maxComplexity),
      repetitionLimitsRule(limits.maxAliases, limits.maxRepeatedFields),
    ];
  }

  /** Answers a connection_init: the credential check (which reports the principal to the gateway), then the application's onConnect. */
  async connect(connectionId: string, payload: unknown, context: InitAuthContext): Promise<ConnectOutcome> {
    const auth = await authenticateInit(payload, context);
    if (!auth.ok) return auth;
    const session: GraphqlSession = {
      connectionId,
      principal: auth.principal,
      topics: this.authorizer.grantFor({ principal: auth.principal, clientId: null }),
      connectionParams: auth.params,
    };
    const verdict = this.hooks.onConnect === undefined ? true : await this.hooks.onConnect(session);
    if (verdict === false) return { ok: false, reason: 'the application refused the connection' };
    return { ok: true, session, ackPayload: verdict === true ? undefined : verdict };
  }

  /** Syntax and validation problems come back as errors for this operation alone. */
  prepare(request: OperationRequest): PreparedOperation {
    const checked = this.check(request.query);
    if ('errors' in checked) return { ok: false, errors: [...checked.errors] };
    const { document } = checked;
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

  /**
   * Parse (bounded by maxTokens), the limits, then graphql-js's specified rules, once per distinct
   * document: graphql-js's OverlappingFieldsCanBeMerged is quadratic in the fields, so a document
   * of 800 aliased fields cost a fifth of a second before the limits refused it.
   */
  private check(query: string): Checked {
    // A large document is remembered by its digest, and only when refused: its refusal is a few errors,
    // where its parse would hold 65 times its text. A client repeating one refused 21 KB document is
    // then answered from here, not parsed each time.
    const key = query.length > MAX_KEPT_DOCUMENT ? digestKey(query) : query;
    const known = this.checked.get(key);
    if (known !== undefined) {
      this.checked.delete(key);
      this.checked.set(key, known);
      return known;
    }
    let checked: Checked;
    try {
      const depth = nestingDepth(query);
      if (depth > MAX_NESTING) {
        throw new GraphQLError(
          `The document nests ${depth} brackets deep, more than ${MAX_NESTING}: it is not run.`,
        );
      }
      const document = parse(query, { maxTokens: this.limits.maxTokens });
      const limited = validate(this.schema, document, this.limitRules);
      const errors = limited.length > 0 ? limited : validate(this.schema, document, specifiedRules);
      checked = errors.length > 0 ? { errors } : { document };
    } catch (err) {
      if (!(err instanceof GraphQLError)) throw err;
      checked = { errors: [err] };
    }
    if (key !== query && !('errors' in checked)) return checked;
    this.checked.set(key, checked);
    this.keptText += key.length;
    while (this.checked.size > VALIDATED_DOCUMENTS || this.keptText > MAX_KEPT_TEXT) {
      const oldest = this.checked.keys().next().value as string;
      this.checked.delete(oldest);
      this.keptText -= oldest.length;
    }
    return checked;
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

/** The cache key of a document too large to keep: its SHA-256, marked so that no document text equals it. */
function digestKey(query: string): string {
  return `\u0000${createHash('sha256').update(query).digest('base64')}`;
}
