import { type Connection, type ConnectionContext } from './subprotocol.types.js';

const OPEN = 1;
const CLOSED = 3;

/**
 * What a `@WebSocketGateway({ subprotocol })` sees of one connection: `handleConnection(client,
 * context)`, `@ConnectedSocket()`, and the client Nest's exception filter answers. That filter sends
 * `{"event":"exception","data":...}` to a client with a numeric `readyState` and a `send()`, as it
 * does to a `ws` socket; `emit(event, data)` sends the same shape for the gateway's own events.
 */
export class GatewayClient {
  /** 1 while open, 3 once closed (the values of a WebSocket's readyState). */
  readyState = OPEN;

  constructor(
    /** The broker's connection under it (the adapter reads its messages and its close). */
    readonly connection: Connection,
    /** The handshake's outcome: endpoint, path parameters, principal, client address. */
    readonly context: ConnectionContext,
  ) {
    connection.onClose(() => {
      this.readyState = CLOSED;
    });
  }

  get id(): string {
    return this.connection.id;
  }

  /** Bytes queued for this client and not yet written to its socket. */
  get bufferedAmount(): number {
    return this.connection.bufferedAmount;
  }

  /** Sends one message as it is; nothing once the connection closed. */
  send(data: string | Uint8Array): void {
    if (this.readyState === OPEN) this.connection.send(data);
  }

  /** Sends `{"event": event, "data": data}`, the shape the gateway's handlers receive. */
  emit(event: string, data: unknown): void {
    this.send(JSON.stringify({ event, data }));
  }

  close(code?: number, reason?: string): void {
    this.connection.close(code, reason);
  }
}
