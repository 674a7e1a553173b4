/**
 * What a protocol core needs of its client's connection: whole messages out, and a way to end it.
 * Cores take this rather than a Connection, so a spec drives them with a recording fake and MQTT's
 * TCP listener is one more implementation; a Connection is a `PeerPort<string | Uint8Array>` as it is.
 */
export interface PeerPort<Out = string> {
  /** One whole protocol message. */
  send(message: Out): void;
  /** Ends the connection; `code` is a WebSocket close code (CLOSE), which a TCP peer never sees. */
  close(code: number, reason: string): void;
}

/**
 * A PeerPort for a protocol with subscriptions: `sendEvent` carries what a client that stopped
 * reading can do without, which a Connection drops past its endpoint's `slowConsumerDropBytes`.
 */
export interface EventPeerPort<Out = string> extends PeerPort<Out> {
  sendEvent(message: Out): void;
}
