import { type PasswordCheck } from '#broker/auth';
import { EndpointScopeError } from '#broker/gateway';
import { type Principal } from '#broker/handshake';
import { type IConnectPacket } from 'mqtt-packet';
import { type ClientContext } from './client-context.js';
import { RC } from './reason-codes.js';

export type AuthOutcome =
  | { readonly ok: true; readonly principal: Principal | null }
  | { readonly ok: false; readonly reasonCode: number };

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * CONNECT credentials win over the handshake's: a password shaped like a JWT is verified as a
 * token (the username is then only a label), any other password is checked against the store with the username. No password falls
 * back to the handshake principal, which a required endpoint must then have.
 */
export async function authenticate(
  connect: IConnectPacket,
  context: ClientContext,
  passwords: PasswordCheck | null,
): Promise<AuthOutcome> {
  const password = connect.password;
  if (password === undefined || password.byteLength === 0) {
    if (context.principal === null && context.authRequired)
      return { ok: false, reasonCode: RC.notAuthorized };
    return { ok: true, principal: context.principal };
  }
  const text = password.toString('utf8');
  if (JWT_SHAPE.test(text)) {
    try {
      return { ok: true, principal: await context.verifyToken(text) };
    } catch (err) {
      // A good token for other endpoints only is refused as the handshake refuses it (403 there).
      return {
        ok: false,
        reasonCode: err instanceof EndpointScopeError ? RC.notAuthorized : RC.badUserNameOrPassword,
      };
    }
  }
  if (passwords === null || !connect.username) return { ok: false, reasonCode: RC.badUserNameOrPassword };
  try {
    const principal = await passwords.verifyPassword(connect.username, password);
    return principal === null ? { ok: false, reasonCode: RC.badUserNameOrPassword } : { ok: true, principal };
  } catch {
    return { ok: false, reasonCode: RC.serverUnavailable };
  }
}
