import { type GraphQLError, type ExecutionResult } from 'graphql';
import { type ConnectionContext } from '#broker/gateway';
import { CLOSE, type Clock, type EventPeerPort, HeldInput, type TimerHandle } from '#broker/kit';
import { type InitAuthContext } from './connection-auth.js';
import { type GraphqlEngine, type OperationRequest } from './graphql-engine.js';
import { type GraphqlSession } from './graphql.options.js';
import { parseLegacyMessage, type LegacyServerMessage } from './legacy-message.js';
import { RefusedOperations, TOO_MANY_REFUSED } from './refused-operations.js';

export const LEGACY_CLOSE = {
  /** The reference server closes 1011 after connection_error on a refused connection_init. */
  refused: CLOSE.internalError,
  initTimeout: 4408,
  tooManyOperations: 4429,
} as const;

interface Operation {
  stream: AsyncGenerator<ExecutionResult, void, void> | null;
}

type State = 'awaiting-init' | 'initialising' | 'ready' | 'closed';

/**
 * The legacy graphql-ws protocol (subscriptions-transport-ws) as a sans-IO state machine. Unlike the
 * reference server, nothing runs before connection_init succeeds: a start before it is refused; what
 * arrives during an async connection_init is held (HeldInput, the endpoint's limits) until the
 * outcome, then handled in order, or dropped on refusal.
 */
export class LegacyGraphqlSession {
  private state: State = 'awaiting-init';
  private session: GraphqlSession | null = null;
  private readonly operations = new Map<string, Operation>();
  private readonly refused: RefusedOperations;
  /** Messages received while connection_init is being checked. */
  private readonly held: HeldInput<string>;
  private readonly timers: TimerHandle[] = [];

  constructor(
    private readonly engine: GraphqlEngine,
    private readonly context: InitAuthContext & Pick<ConnectionContext, 'id' | 'holdLimits'>,
    private readonly peer: EventPeerPort,
    /** Time for the init timeout and the keep-alive (a ManualClock in the specs). */
    private readonly clock: Clock,
    /** Something below the protocol failed (a hook threw): the caller logs it, the client gets an error. */
    private readonly failed: (err: unknown) => void,
  ) {
    this.refused = new RefusedOperations(() => clock.now());
    this.held = new HeldInput(context.holdLimits);
    this.timers.push(
      clock.after(engine.limits.initTimeoutMs, () => {
        if (this.state === 'awaiting-init')
          this.close(LEGACY_CLOSE.initTimeout, 'Connection initialisation timeout');
      }),
    );
  }

  get operationCount(): number {
    return this.operations.size;
  }

  receive(text: string): void {
    if (this.state === 'closed') return;
    if (this.state === 'initialising') return this.hold(text);
    const parsed = parseLegacyMessage(text);
    if (!parsed.ok) {
      if (parsed.id !== undefined) return this.sendError(parsed.id, { message: parsed.problem });
      return this.send({ type: 'connection_error', payload: { message: parsed.problem } });
    }
    const message = parsed.message;
    switch (message.type) {
      case 'connection_init':
        return this.init(message.payload);
      case 'connection_terminate':
        return this.close(CLOSE.normal, 'connection_terminate');
      case 'start':
        return this.start(message.id, message.payload);
      case 'stop':
        return this.stop(message.id);
    }
  }

  /** The transport closed: every operation ends, every timer stops. */
  closed(): void {
    this.state = 'closed';
    for (const timer of this.timers) this.clock.cancel(timer);
    this.held.take();
    for (const operation of this.operations.values()) this.endStream(operation);
    this.operations.clear();
  }

  private init(payload: unknown): void {
    if (this.state !== 'awaiting-init') {
      return this.send({
        type: 'connection_error',
        payload: { message: 'connection_init was already received on this connection' },
      });
    }
    this.state = 'initialising';
    this.engine.connect(this.context.id, payload, this.context).then(
      (outcome) => {
        if (this.state === 'closed') return;
        if (!outcome.ok) {
          this.send({ type: 'connection_error', payload: { message: outcome.reason } });
          return this.close(LEGACY_CLOSE.refused, outcome.reason);
        }
        this.session = outcome.session;
        this.state = 'ready';
        this.send(
          outcome.ackPayload === undefined
            ? { type: 'connection_ack' }
            : { type: 'connection_ack', payload: outcome.ackPayload },
        );
        this.send({ type: 'ka' });
        const every = this.engine.limits.keepAliveMs;
        if (every > 0) {
          const keepAlive = this.clock.after(every, () => {
            this.send({ type: 'ka' });
            keepAlive.refresh();
          });
          this.timers.push(keepAlive);
        }
        for (const text of this.held.take()) this.receive(text);
      },
      (err: unknown) => {
        if (this.state === 'closed') return;
        this.failed(err);
        this.send({ type: 'connection_error', payload: { message: 'Internal server error' } });
        this.close(LEGACY_CLOSE.refused, 'Internal server error');
      },
    );
  }

  private start(id: string, request: OperationRequest): void {
    if (this.state === 'awaiting-init') {
      return this.sendError(id, {
        message: 'Send connection_init first: no operation runs before the connection is acknowledged',
      });
    }
    // A start reusing a running id replaces that operation, as the reference server does.
    this.silence(id);
    if (this.operationCount >= this.engine.limits.maxOperations) {
      const max = this.engine.limits.maxOperations;
      return this.close(
        LEGACY_CLOSE.tooManyOperations,
        `Too many operations: at most ${max} at once on one connection`,
      );
    }
    const prepared = this.engine.prepare(request);
    if (!prepared.ok) {
      this.sendError(id, errorPayload(prepared.errors));
      if (this.refused.add()) this.close(LEGACY_CLOSE.tooManyOperations, TOO_MANY_REFUSED);
      return;
    }
    const operation: Operation = { stream: null };
    this.operations.set(id, operation);
    this.run(id, operation, prepared).catch((err: unknown) => {
      this.failed(err);
      if (this.end(id, operation)) this.sendError(id, { message: 'Internal server error' });
    });
  }

  private async run(
    id: string,
    operation: Operation,
    prepared: Parameters<GraphqlEngine['run']>[0],
  ): Promise<void> {
    const outcome = await this.engine.run(prepared, this.session as GraphqlSession);
    if (!(Symbol.asyncIterator in outcome)) {
      if (!this.end(id, operation)) return;
      this.send({ type: 'data', id, payload: resultPayload(outcome) });
      return this.send({ type: 'complete', id });
    }
    if (this.operations.get(id) !== operation) {
      await outcome.return();
      return;
    }
    operation.stream = outcome;
    try {
      for await (const result of outcome) {
        if (this.operations.get(id) !== operation) return;
        const event = { type: 'data', id, payload: resultPayload(result) } satisfies LegacyServerMessage;
        this.peer.sendEvent(JSON.stringify(event));
      }
    } catch (err) {
      if (this.end(id, operation)) this.sendError(id, { message: (err as Error).message });
      return;
    }
    if (this.end(id, operation)) this.send({ type: 'complete', id });
  }

  private stop(id: string): void {
    const known = this.operations.has(id);
    this.silence(id);
    if (known) this.send({ type: 'complete', id });
  }

  /** Ends an operation without telling the client (stop tells it; a replacing start must not). */
  private silence(id: string): void {
    const operation = this.operations.get(id);
    if (operation === undefined) return;
    this.operations.delete(id);
    this.endStream(operation);
  }

  /** Removes the operation if it is still the one under `id`; false when it was stopped or replaced meanwhile. */
  private end(id: string, operation: Operation): boolean {
    if (this.operations.get(id) !== operation) return false;
    this.operations.delete(id);
    return true;
  }

  /** An application's own iterator may reject on return(); that must not become an unhandled rejection. */
  private endStream(operation: Operation): void {
    operation.stream?.return().catch((err: unknown) => this.failed(err));
  }

  /** A flood before the ack is refused as the gateway refuses one before its auth message: 1008. */
  private hold(text: string): void {
    const refusal = this.held.push(text, Buffer.byteLength(text));
    if (refusal === null) return;
    this.send({ type: 'connection_error', payload: { message: refusal } });
    this.close(CLOSE.policyViolation, refusal);
  }

  private send(message: LegacyServerMessage): void {
    this.peer.send(JSON.stringify(message));
  }

  private sendError(id: string, payload: Readonly<Record<string, unknown>>): void {
    this.send({ type: 'error', id, payload });
  }

  private close(code: number, reason: string): void {
    this.peer.close(code, reason);
    this.closed();
  }
}

/** The legacy protocol's `error` holds one error object: several validation errors become one message. */
function errorPayload(errors: readonly GraphQLError[]): Readonly<Record<string, unknown>> {
  if (errors.length === 1) return { ...(errors[0] as GraphQLError).toJSON() };
  return { message: errors.map((e) => e.message).join('\n') };
}

function resultPayload(result: ExecutionResult): Readonly<Record<string, unknown>> {
  return {
    ...(result.data === undefined ? {} : { data: result.data }),
    ...(result.errors === undefined ? {} : { errors: result.errors.map((e) => e.toJSON()) }),
  };
}
