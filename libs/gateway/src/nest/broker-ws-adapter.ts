import { EventEmitter } from 'node:events';
import {
  type INestApplicationContext,
  Logger,
  type WebSocketAdapter,
  type WsMessageHandler,
} from '@nestjs/common';
import { type Observable } from 'rxjs';
import { GatewayClient } from '../connections/gateway-client.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import {
  type Connection,
  type ConnectionContext,
  type SubprotocolHandler,
  type SubprotocolOptions,
} from '../connections/subprotocol.types.js';

/** `@WebSocketGateway({ subprotocol: { name, onUnsupported, ... } })`: the options BrokerWsAdapter reads. */
export interface SubprotocolGatewayOptions {
  readonly subprotocol: SubprotocolOptions;
  readonly [key: string]: unknown;
}

/** One incoming message as the gateway's handlers see it: `@SubscribeMessage(event)` gets `data`. */
export interface GatewayMessage {
  readonly event: string;
  readonly data?: unknown;
}

/** Turns a message into `{event, data}`; null ignores it; a throw answers with an `exception` event. */
export type GatewayMessageParser = (data: Buffer, isBinary: boolean) => GatewayMessage | null;

/** What `@WebSocketServer()` injects: the gateway's open connections. */
export class GatewayServer extends EventEmitter implements SubprotocolHandler {
  readonly clients = new Set<GatewayClient>();

  constructor(readonly options: SubprotocolOptions) {
    super();
  }

  open(connection: Connection, context: ConnectionContext): void {
    const client = new GatewayClient(connection, context);
    this.clients.add(client);
    connection.onClose(() => this.clients.delete(client));
    // Nest's handler: handleConnection(client, context), then the message bindings.
    this.emit('connection', client, context);
  }

  /** Sends `{event, data}` to every open client of this gateway. */
  broadcast(event: string, data: unknown): void {
    for (const client of this.clients) client.emit(event, data);
  }
}

const defaultParser: GatewayMessageParser = (data, isBinary) => {
  if (isBinary) throw new Error('Binary messages are not accepted; send JSON text.');
  const message: unknown = JSON.parse(data.toString('utf8'));
  if (
    typeof message !== 'object' ||
    message === null ||
    typeof (message as GatewayMessage).event !== 'string'
  ) {
    throw new Error('A message is a JSON object with a string "event" and optional "data".');
  }
  return message as GatewayMessage;
};

/**
 * The Nest WebSocket adapter (the role @nestjs/platform-ws plays) for gateways behind the broker's
 * handshake: each `@WebSocketGateway({ subprotocol })` becomes a subprotocol module, so the broker
 * decides its upgrades (version, origin, auth, scopes, subprotocol, limits) on the endpoints the
 * config lists it on, and Nest runs its `@SubscribeMessage` handlers with guards, pipes,
 * interceptors and filters over `{event, data}` JSON messages.
 */
export class BrokerWsAdapter implements WebSocketAdapter<
  GatewayServer,
  GatewayClient,
  SubprotocolGatewayOptions
> {
  private readonly logger = new Logger(BrokerWsAdapter.name);
  private readonly parse: GatewayMessageParser;

  constructor(
    private readonly app: INestApplicationContext,
    options: { readonly messageParser?: GatewayMessageParser } = {},
  ) {
    this.parse = options.messageParser ?? defaultParser;
  }

  create(port: number, options?: SubprotocolGatewayOptions): GatewayServer {
    const subprotocol = options?.subprotocol;
    if (subprotocol === undefined || typeof subprotocol.name !== 'string') {
      throw new Error(
        'BrokerWsAdapter: a gateway must name its subprotocol, as in ' +
          "@WebSocketGateway({ subprotocol: { name: 'events.v1', onUnsupported: 'reject' } }), " +
          'and the config must list it on an endpoint',
      );
    }
    if (port !== 0 || options?.['path'] !== undefined || options?.['namespace'] !== undefined) {
      throw new Error(
        `BrokerWsAdapter: the gateway for '${subprotocol.name}' sets a port, path or namespace; ` +
          "its endpoints come from the broker config's `endpoints` (list the subprotocol there)",
      );
    }
    const server = new GatewayServer({ messages: 'text', ...subprotocol });
    this.app
      .get(SubprotocolRegistry, { strict: false })
      .register(server.options, server, `@WebSocketGateway('${subprotocol.name}')`);
    return server;
  }

  bindClientConnect(server: GatewayServer, callback: (...args: unknown[]) => void): void {
    server.on('connection', callback);
  }

  bindClientDisconnect(client: GatewayClient, callback: () => void): void {
    client.connection.onClose(() => callback());
  }

  bindMessageHandlers(
    client: GatewayClient,
    handlers: WsMessageHandler[],
    transform: (data: unknown) => Observable<unknown>,
  ): void {
    const byEvent = new Map(handlers.map((handler) => [handler.message as string, handler]));
    client.connection.onMessage((data, isBinary) => {
      let message: GatewayMessage | null;
      try {
        message = this.parse(data, isBinary);
      } catch (err) {
        client.emit('exception', { status: 'error', message: (err as Error).message });
        return;
      }
      if (message === null) return;
      const handler = byEvent.get(message.event);
      if (handler === undefined) {
        client.emit('exception', { status: 'error', message: `Unknown event '${message.event}'.` });
        return;
      }
      let results: Observable<unknown>;
      try {
        results = transform(handler.callback(message.data, message.event));
      } catch (err) {
        this.logger.error(err);
        return;
      }
      results.subscribe({
        next: (result) => {
          if (result !== undefined && result !== null) client.send(JSON.stringify(result));
        },
        // Nest's exception filters answered the client already; what reaches here is a filter's rethrow.
        error: (err: unknown) => this.logger.error(err),
      });
    });
  }

  /** The broker drains the connections at shutdown (1001); the gateway's server holds nothing else. */
  close(server: GatewayServer): void {
    server.clients.clear();
  }

  /** Nest calls it at shutdown, after every gateway's close. */
  dispose(): void {}
}
