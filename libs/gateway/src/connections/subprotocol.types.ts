import { type ClientCertificate, type DeflateOptions, type Principal } from '#broker/handshake';
import { type FirstMessageCredential, type FirstMessageOutcome } from '../upgrade/first-message-policy.js';
import { type HoldLimits } from '#broker/kit';

export interface SubprotocolOptions {
  /** The Sec-WebSocket-Protocol value this module speaks. */
  readonly name: string;
  /** When it is an endpoint's default module and the client offers nothing it hosts: 400, or 101 without the header. */
  readonly onUnsupported: 'reject' | 'omit';
  /** Which WebSocket message types the protocol uses; the other type closes with 1003. */
  readonly messages?: 'text' | 'binary' | 'any';
  /** Largest message accepted (bytes); bigger ones close with 1009. An endpoint may lower or raise it. */
  readonly maxPayload?: number;
  /** permessage-deflate settings when the module wants compression; off by default (RFC 7692 costs ~300 KB per connection). */
  readonly perMessageDeflate?: DeflateOptions | false;
  /** The protocol authenticates in its own first message (MQTT CONNECT, GraphQL connection_init, WAMP HELLO): see ConnectionContext.authenticate. */
  readonly ownFirstMessageAuth?: boolean;
}

/** The handshake's outcome, as a module sees it. */
export interface ConnectionContext {
  readonly id: string;
  readonly endpoint: string;
  readonly protocol: string | null;
  readonly params: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  readonly principal: Principal | null;
  /**
   * The endpoint's auth mode. A module with its own first-message auth reads it to know whether an
   * unauthenticated connection may go on ('required' reaches it without a principal).
   */
  readonly authMode: 'none' | 'optional' | 'required';
  /**
   * What a module may hold while its first message's credential is checked (the endpoint's
   * `auth.firstMessageMaxQueued` and `firstMessageMaxBytes`): hold it in a HeldInput.
   */
  readonly holdLimits: HoldLimits;
  /**
   * The first-message authentication policy, for a protocol whose own first message carries the
   * credential (MQTT CONNECT, connection_init, a WAMP ticket): the endpoint's auth mode, its
   * `endpoint:` scopes, the store's password check, within `auth.firstMessageTimeoutMs`. Null when the
   * message carried none (the handshake's principal then stands, if the mode allows). An accepted
   * credential is reported as `identify` reports one. The module maps a refusal to its protocol's.
   */
  authenticate(credential: FirstMessageCredential | null): Promise<FirstMessageOutcome>;
  /**
   * Tells the gateway who is on this connection when the module checked a credential itself (WAMP-CRA,
   * an OCPP charge point): the admin API lists it, and the connection is closed 1008 when the
   * credential's `exp` passes, as for handshake credentials.
   */
  identify(principal: Principal): void;
}

export interface HandshakeCheckContext {
  readonly endpoint: string;
  readonly params: Readonly<Record<string, string>>;
  readonly principal: Principal | null;
  readonly secure: boolean;
  /** The TLS client certificate presented to the broker itself (with tls.caFile); null when none. */
  readonly clientCertificate: ClientCertificate | null;
  header(name: string): readonly string[];
}

export interface HandshakeCheckFailure {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** Extra response headers the status calls for (401: `WWW-Authenticate: Basic realm="..."`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** The transport a module speaks through: no `ws` types leak into modules. */
export interface Connection {
  readonly id: string;
  readonly bufferedAmount: number;
  send(data: string | Uint8Array): void;
  /**
   * An event the client can do without (one delivery of a subscription): sent as `send` sends, or,
   * while the client has more than its endpoint's `slowConsumerDropBytes` unsent, dropped and counted
   * (`broker_messages_dropped_total`). False when dropped.
   */
  sendEvent(data: string | Uint8Array): boolean;
  close(code?: number, reason?: string): void;
  /**
   * Loop time spent on this client's messages after its message handler returned (a store write the
   * handler awaited, say), in milliseconds: counted against the endpoint's `inputBudget` as the
   * handler's own time is, so work deferred past an await is no way around the budget. Nothing
   * happens on an endpoint without one, on a connection that is closing, or for a non-positive `ms`.
   */
  charge(ms: number): void;
  onMessage(handler: (data: Buffer, isBinary: boolean) => void): void;
  onClose(handler: (code: number, reason: string) => void): void;
}

export interface SubprotocolHandler {
  open(connection: Connection, context: ConnectionContext): void;
  /** Module-specific handshake check, run after authentication and subprotocol selection. */
  checkHandshake?(context: HandshakeCheckContext): Promise<HandshakeCheckFailure | null>;
  /** Sent before the gateway's close 1001 at shutdown (for example MQTT 5 DISCONNECT 0x8B). */
  goodbye?(connection: Connection): void;
}
