import { Inject } from '@nestjs/common';
import { GraphQLError } from 'graphql';
import { CloseCode, makeServer, type Server } from 'graphql-ws';
import { StreamEvents } from './stream-events.js';
import { type Logger } from 'pino';
import {
  BROKER_LOGGER,
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
} from '#broker/gateway';
import { GraphqlEngine } from './graphql-engine.js';
import { type GraphqlSession } from './graphql.options.js';
import { ReusedIdGate } from './reused-id-gate.js';
import { RefusedOperations, TOO_MANY_REFUSED } from './refused-operations.js';
import { readTransportWsMessage } from './transport-ws-message.js';

/** What graphql-ws's per-connection `ctx.extra` holds for us. */
interface Extra {
  readonly connection: Connection;
  readonly context: ConnectionContext;
  session: GraphqlSession | null;
  readonly refused: RefusedOperations;
  /** Its subscriptions' ids: their `next` messages are events (Connection.sendEvent). */
  readonly streams: StreamEvents;
}

/** Sized for operations, not data: a query far over this is more likely abuse than need. */
export const GRAPHQL_MAX_PAYLOAD = 64 * 1024;

/**
 * graphql-transport-ws, the protocol of the graphql-ws library, served by its own `makeServer`
 * through a small adapter over our Connection (never `useServer`, which would take over `ws`).
 * Policy 'omit', so as an endpoint's default module it accepts a client offering neither GraphQL
 * protocol and closes it 4406, as graphql-ws does, instead of failing the handshake.
 */
@Subprotocol({
  name: 'graphql-transport-ws',
  onUnsupported: 'omit',
  messages: 'text',
  maxPayload: GRAPHQL_MAX_PAYLOAD,
  ownFirstMessageAuth: true,
})
export class GraphqlTransportWsSubprotocol implements SubprotocolHandler {
  private readonly server: Server<Extra>;

  constructor(
    engine: GraphqlEngine,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {
    const { maxOperations } = engine.limits;
    this.server = makeServer<Record<string, unknown> | undefined, Extra>({
      schema: engine.schema,
      connectionInitWaitTimeout: engine.limits.initTimeoutMs,
      onConnect: async (ctx) => {
        const { connection, context } = ctx.extra;
        const outcome = await engine.connect(context.id, ctx.connectionParams, context);
        if (!outcome.ok) {
          // graphql-ws would close 4403 with a bare "Forbidden"; closing first gives the reason.
          connection.close(CloseCode.Forbidden, `Forbidden: ${outcome.reason}`);
          return false;
        }
        ctx.extra.session = outcome.session;
        return outcome.ackPayload ?? true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const { connection, session } = ctx.extra;
        // The new operation is already counted in ctx.subscriptions.
        if (Object.keys(ctx.subscriptions).length > maxOperations) {
          connection.close(4429, `Too many operations: at most ${maxOperations} at once on one connection`);
          return [new GraphQLError('Too many operations')];
        }
        if (session === null) return [new GraphQLError('The connection is not acknowledged')];
        const prepared = engine.prepare(payload);
        if (!prepared.ok) {
          if (ctx.extra.refused.add()) connection.close(4429, TOO_MANY_REFUSED);
          return prepared.errors;
        }
        if (prepared.kind === 'subscription') ctx.extra.streams.started(id);
        return engine.executionArgs(prepared, session);
      },
      onComplete: (ctx, id) => ctx.extra.streams.ended(id),
      onError: (ctx, id) => {
        ctx.extra.streams.ended(id);
      },
    });
  }

  open(connection: Connection, context: ConnectionContext): void {
    const streams = new StreamEvents();
    const closed = this.server.opened(
      {
        protocol: context.protocol ?? '',
        send: (data) => {
          if (streams.isEvent(data)) connection.sendEvent(data);
          else connection.send(data);
        },
        close: (code, reason) => connection.close(code, reason),
        onMessage: (handle) => {
          const gate = new ReusedIdGate(handle, (err) => this.failed(connection, err));
          connection.onMessage((data) => {
            const text = data.toString('utf8');
            const read = readTransportWsMessage(text);
            if (!read.ok) return connection.close(CloseCode.BadRequest, read.problem);
            gate.push(text, read.message.type, read.message.id);
          });
        },
      },
      { connection, context, session: null, refused: new RefusedOperations(), streams },
    );
    connection.onClose((code, reason) => {
      closed(code, reason).catch((err: unknown) => this.failed(connection, err));
    });
  }

  /** A bug below us (a hook, graphql-ws) costs this connection only; the client learns 4500, not the details. */
  private failed(connection: Connection, err: unknown): void {
    this.logger.error(
      { connection: connection.id, err: (err as Error).message },
      'graphql-transport-ws failed',
    );
    connection.close(CloseCode.InternalServerError, 'Internal server error');
  }
}
