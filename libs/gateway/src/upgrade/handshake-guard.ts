import { DiscoveryService } from '@nestjs/core';
import { type ClientCertificate, type Principal } from '#broker/handshake';

export interface HandshakeGuardOptions {
  /** The endpoint paths (as configured, `/ocpp/:chargePointId`) it guards; unset: every endpoint. */
  readonly endpoints?: readonly string[];
  /**
   * Guards run by ascending order (default 0); guards of equal order in no set order (Nest's discovery
   * gives them as they were created), so give one that reads another's principal a higher order.
   */
  readonly order?: number;
}

/** What a guard sees of a handshake. */
export interface HandshakeGuardContext {
  /** The endpoint's path as configured. */
  readonly endpoint: string;
  /** Its path parameters. */
  readonly params: Readonly<Record<string, string>>;
  /** The client's address, as the trusted-proxy rules give it. */
  readonly remoteAddress: string;
  readonly secure: boolean;
  readonly clientCertificate: ClientCertificate | null;
  /** The principal so far (a verified token's, or an earlier guard's), or null. */
  readonly principal: Principal | null;
  /** Every value of a request header (names are case-insensitive). */
  header(name: string): readonly string[];
  /** A cookie of the request, as sent (undefined when absent). */
  cookie(name: string): string | undefined;
  /** Makes `subject` the connection's principal (its claims reach the module and the admin listing). */
  authenticate(subject: string, claims?: Readonly<Record<string, unknown>>): void;
}

/**
 * An application's check of the upgrade handshake, a provider with injected services, marked with
 * `@HandshakeGuard()`: it runs after the broker's own checks (version, origin, the credential), by its
 * `order`, and again for the principal a first-message credential brings (MQTT CONNECT, connection_init,
 * the auth message), with the same request. It lets the handshake go on by returning true, refuses it by
 * returning false (403) or throwing a Nest HttpException (its status and message: UnauthorizedException
 * is a 401 with WWW-Authenticate) or a HandshakeRefusal (with headers), and may authenticate the
 * connection itself (`context.authenticate`). Anything else it throws is a 500, logged, never a 101.
 */
export interface HandshakeGuardHandler {
  canActivate(context: HandshakeGuardContext): boolean | Promise<boolean>;
}

/** A guard's refusal with headers of its own (429 with Retry-After, 401 with a WWW-Authenticate challenge). */
export class HandshakeRefusal extends Error {
  override readonly name = 'HandshakeRefusal';

  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** Marks a provider as a handshake guard; discovered at boot as @Subprotocol providers are. */
export const HandshakeGuard = DiscoveryService.createDecorator<HandshakeGuardOptions>();
