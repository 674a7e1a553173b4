import { CLOSE } from '#broker/gateway';
import { type Principal } from '#broker/handshake';
import { RC } from './reason-codes.js';

/** The network connection under an MQTT client: a WebSocket or a TCP socket. */
export interface MqttTransport {
  /** One whole packet. */
  write(bytes: Buffer): void;
  /** Bytes written and not yet sent on (a client that stops reading makes it grow). */
  buffered(): number;
  /** Ends the network connection; `code` is the WebSocket close code (TCP just ends). */
  end(code: number, reason: string): void;
}

/** What the transport knows about the client before CONNECT. */
export interface ClientContext {
  readonly transport: 'ws' | 'tcp';
  readonly remoteAddress: string;
  /** Established at the WebSocket handshake, if any. */
  readonly principal: Principal | null;
  /** The endpoint requires authentication: CONNECT must carry a credential when the handshake did not. */
  readonly authRequired: boolean;
  verifyToken(token: string): Promise<Principal>;
  /** Reports the principal CONNECT authenticated to the transport (the gateway's `identify`). */
  identify?(principal: Principal): void;
}

/** The WebSocket close code that goes with a server-side DISCONNECT reason code. */
export function closeCodeFor(reasonCode: number): number {
  if (reasonCode === RC.packetTooLarge) return CLOSE.tooBig;
  if (reasonCode === RC.notAuthorized) return CLOSE.policyViolation;
  if (reasonCode < 0x80 || reasonCode === RC.sessionTakenOver || reasonCode === RC.keepAliveTimeout) {
    return CLOSE.normal;
  }
  return CLOSE.protocolError;
}
