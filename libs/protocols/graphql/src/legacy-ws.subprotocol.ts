import { Inject } from '@nestjs/common';
import { type Logger } from 'pino';
import {
  BROKER_LOGGER,
  Subprotocol,
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
} from '#broker/gateway';
import { systemClock } from '#broker/kit';
import { GraphqlEngine } from './graphql-engine.js';
import { LegacyGraphqlSession } from './legacy-session.js';
import { GRAPHQL_MAX_PAYLOAD } from './transport-ws.subprotocol.js';

/** The legacy `graphql-ws` protocol of subscriptions-transport-ws, for clients that still speak it. */
@Subprotocol({
  name: 'graphql-ws',
  onUnsupported: 'reject',
  messages: 'text',
  maxPayload: GRAPHQL_MAX_PAYLOAD,
  ownFirstMessageAuth: true,
})
export class GraphqlLegacyWsSubprotocol implements SubprotocolHandler {
  constructor(
    private readonly engine: GraphqlEngine,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  open(connection: Connection, context: ConnectionContext): void {
    const session = new LegacyGraphqlSession(this.engine, context, connection, systemClock, (err) =>
      this.logger.error(
        { connection: connection.id, err: (err as Error).message },
        'graphql-ws operation failed',
      ),
    );
    connection.onMessage((data) => session.receive(data.toString('utf8')));
    connection.onClose(() => session.closed());
  }
}
