import { type Principal } from '#broker/handshake';

/**
 * Checks a username/password credential (MQTT CONNECT, WAMP ticket with a username) against the
 * store. Provided by the store module under PASSWORD_CHECK; protocol modules inject it as optional
 * and refuse username/password logins when it is absent.
 */
export interface PasswordCheck {
  /** The principal (scopes in `claims.scopes`) when the pair is valid and not revoked or expired; null otherwise. */
  verifyPassword(username: string, password: Uint8Array): Promise<Principal | null>;
}

export const PASSWORD_CHECK = Symbol('PASSWORD_CHECK');
