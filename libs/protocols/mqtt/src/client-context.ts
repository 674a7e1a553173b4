import { type FirstMessageCredential, type FirstMessageOutcome } from '#broker/gateway';
import { CLOSE, type HoldLimits, type PeerPort } from '#broker/kit';
import { RC } from './reason-codes.js';

/** The network connection under an MQTT client, a WebSocket or a TCP socket: one whole packet per `send`. */
export interface MqttTransport extends PeerPort<Buffer> {
  /** Bytes written and not yet sent on (a client that stops reading makes it grow). */
  buffered(): number;
  /**
   * Loop time spent on the client's input after `receive` returned (a SUBSCRIBE handled over several
   * turns), counted against its input budget as the time inside `receive` is.
   */
  charge?(ms: number): void;
}

/** What the transport knows about the client before CONNECT. */
export interface ClientContext {
  readonly transport: 'ws' | 'tcp';
  readonly remoteAddress: string;
  /** The gateway's id of its WebSocket connection (the admin API closes it by that); null over TCP. */
  readonly connectionId: string | null;
  /** What may be held while CONNECT's credential is checked (packets pipelined behind it). */
  readonly holdLimits: HoldLimits;
  /**
   * The first-message policy (ConnectionContext.authenticate) for CONNECT's credential: over WebSocket
   * the endpoint's, which falls back to the handshake's principal; over TCP the same without an endpoint.
   */
  authenticate(credential: FirstMessageCredential | null): Promise<FirstMessageOutcome>;
}

/** The WebSocket close code that goes with a server-side DISCONNECT reason code. */
export function closeCodeFor(reasonCode: number): number {
  if (reasonCode === RC.packetTooLarge) return CLOSE.tooBig;
  if (reasonCode === RC.notAuthorized) return CLOSE.policyViolation;
  if (
    reasonCode < 0x80 ||
    reasonCode === RC.sessionTakenOver ||
    reasonCode === RC.keepAliveTimeout ||
    reasonCode === RC.administrativeAction
  ) {
    return CLOSE.normal;
  }
  // This node lost touch with the cluster: it goes away from the client, which reconnects elsewhere.
  if (reasonCode === RC.useAnotherServer) return CLOSE.goingAway;
  return CLOSE.protocolError;
}
