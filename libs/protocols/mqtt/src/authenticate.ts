import { type FirstMessageCredential, type FirstMessageRefusal } from '#broker/gateway';
import { type IConnectPacket } from 'mqtt-packet';
import { RC } from './reason-codes.js';

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * CONNECT's credential for the first-message policy (ConnectionContext.authenticate): a password
 * shaped like a JWT is a token (the username is then only a label), any other password goes with the
 * username to the store. No password: none, and the handshake's principal stands.
 */
export function credentialOf(connect: IConnectPacket): FirstMessageCredential | null {
  const password = connect.password;
  if (password === undefined || password.byteLength === 0) return null;
  const text = password.toString('utf8');
  if (JWT_SHAPE.test(text)) return { token: text };
  return { username: connect.username ?? '', password };
}

/** The CONNACK reason code of each refusal (v3 clients get the nearest return code). */
export const REFUSAL_CODES: Readonly<Record<FirstMessageRefusal, number>> = {
  missing: RC.notAuthorized,
  'bad-credential': RC.badUserNameOrPassword,
  // A good credential for other endpoints only is refused as the handshake refuses it (403 there).
  forbidden: RC.notAuthorized,
  unavailable: RC.serverUnavailable,
  timeout: RC.serverUnavailable,
};
