import { opensEndpoint, type PasswordCheck } from '#broker/auth';
import { CredentialError, CredentialUnavailableError, type Principal } from '#broker/handshake';

/** A credential a protocol's own first message carried (MQTT CONNECT, connection_init, a WAMP ticket). */
export type FirstMessageCredential =
  { readonly token: string } | { readonly username: string; readonly password: Uint8Array };

/**
 * Why a first-message credential was refused; each protocol maps it to its own refusal (a CONNACK
 * code, a close code, an ABORT reason).
 */
export type FirstMessageRefusal =
  /** No credential, where the endpoint requires one and the handshake brought none. */
  | 'missing'
  /** The token did not verify, or the user name and password did not match (or nothing can check passwords). */
  | 'bad-credential'
  /** A good credential whose `endpoint:` scopes leave out this endpoint (403 at the handshake). */
  | 'forbidden'
  /** The password check failed (the store did not answer). */
  | 'unavailable'
  /** The check did not finish within the endpoint's `auth.firstMessageTimeoutMs`. */
  | 'timeout';

export type FirstMessageOutcome =
  /** `principal` is the credential's, or without one the handshake's (null: anonymous). */
  | { readonly ok: true; readonly principal: Principal | null }
  /** `reason` is a sentence for a log line or a close reason; it never holds the credential. */
  | { readonly ok: false; readonly refusal: FirstMessageRefusal; readonly reason: string };

/** What the policy reads about the endpoint the connection came through. */
export interface FirstMessageEndpoint {
  readonly mode: 'none' | 'optional' | 'required';
  /** Whose `endpoint:` scopes a credential must hold; null where there is no endpoint (MQTT over TCP). */
  readonly path: string | null;
  /** How long the check may take (a token in the store, a password hash). */
  readonly timeoutMs: number;
}

/** The checks behind every credential: the gateway's token verifier and the store's password check. */
export interface CredentialChecks {
  verifyToken(token: string): Promise<Principal>;
  /** Null when no store is installed: then no user name and password is ever accepted. */
  readonly passwords: PasswordCheck | null;
}

/**
 * The one first-message authentication policy: a token is verified as at the handshake, a user name
 * and password go to the store, and either must open the endpoint (`endpoint:` scopes). Without a
 * credential the handshake's principal stands, and a `required` endpoint refuses a connection that
 * has neither. The check is bounded in time, so a store that never answers cannot hold a connection.
 */
export async function authenticateFirstMessage(
  credential: FirstMessageCredential | null,
  handshakePrincipal: Principal | null,
  endpoint: FirstMessageEndpoint,
  checks: CredentialChecks,
): Promise<FirstMessageOutcome> {
  if (credential === null) {
    if (handshakePrincipal === null && endpoint.mode === 'required')
      return { ok: false, refusal: 'missing', reason: 'a credential is required' };
    return { ok: true, principal: handshakePrincipal };
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<FirstMessageOutcome>((resolve) => {
    timer = setTimeout(
      () => resolve({ ok: false, refusal: 'timeout', reason: 'the credential check did not finish in time' }),
      endpoint.timeoutMs,
    );
  });
  try {
    return await Promise.race([check(credential, endpoint.path, checks), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function check(
  credential: FirstMessageCredential,
  path: string | null,
  checks: CredentialChecks,
): Promise<FirstMessageOutcome> {
  const what = 'token' in credential ? 'the token' : 'the user name and password';
  const refused = (refusal: FirstMessageRefusal, why: string): FirstMessageOutcome => ({
    ok: false,
    refusal,
    reason: `${what} was not accepted: ${why}`,
  });
  let principal: Principal | null;
  if ('token' in credential) {
    try {
      principal = await checks.verifyToken(credential.token);
    } catch (err) {
      if (err instanceof CredentialUnavailableError) return refused('unavailable', err.message);
      return refused('bad-credential', err instanceof CredentialError ? err.message : 'verification failed');
    }
  } else {
    if (checks.passwords === null) return refused('bad-credential', 'no password check is installed');
    try {
      principal = await checks.passwords.verifyPassword(credential.username, credential.password);
    } catch {
      return refused('unavailable', 'the credential store did not answer');
    }
    if (principal === null) return refused('bad-credential', 'bad user name or password');
  }
  if (path !== null && !opensEndpoint(principal, path))
    return refused('forbidden', `this credential does not open ${path}`);
  return { ok: true, principal };
}
