import { CredentialError } from '#broker/handshake';

/**
 * A good credential whose `endpoint:` scopes leave out this endpoint: what a module's own first message
 * (MQTT CONNECT, connection_init, a WAMP ticket) gets from ConnectionContext.verifyToken, as the same
 * token gets 403 at the handshake. Modules tell it from a bad token where their protocol can (MQTT
 * answers Not authorized rather than Bad user name or password).
 */
export class EndpointScopeError extends CredentialError {
  constructor(path: string) {
    super(`this credential does not open ${path}`);
  }
}
