import { CredentialError, type Principal } from '#broker/handshake';
import { type ConnectionContext } from '#broker/gateway';

export type InitAuthContext = Pick<ConnectionContext, 'principal' | 'authMode' | 'verifyToken'> &
  Partial<Pick<ConnectionContext, 'identify'>>;

export type InitAuthOutcome =
  | {
      readonly ok: true;
      readonly principal: Principal | null;
      readonly params: Readonly<Record<string, unknown>>;
    }
  | { readonly ok: false; readonly reason: string };

/** connection_init payload keys that carry a credential: `token`, or `authorization` ("Bearer <token>", any case). */
function isCredentialKey(key: string): boolean {
  return key === 'token' || key.toLowerCase() === 'authorization';
}

/**
 * The connection_init credential check both protocols share. The payload is the first-message
 * credential source: a token there is verified with the handshake's verifier and replaces the
 * handshake's principal; without one, the handshake's principal stands, and an endpoint whose auth
 * mode is 'required' refuses the connection. On a 'none' endpoint credentials are not read. The
 * returned params never hold the credential, so resolvers and logs cannot leak it.
 */
export async function authenticateInit(payload: unknown, context: InitAuthContext): Promise<InitAuthOutcome> {
  const record =
    typeof payload === 'object' && payload !== null && !Array.isArray(payload)
      ? (payload as Record<string, unknown>)
      : {};
  const params: Record<string, unknown> = {};
  const credentials: unknown[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (isCredentialKey(key)) credentials.push(key === 'token' ? value : bearer(value));
    else params[key] = value;
  }
  if (context.authMode === 'none') return { ok: true, principal: null, params };
  if (credentials.length > 1)
    return { ok: false, reason: 'send one credential: token or authorization, not both' };
  const token = credentials[0];
  if (token === undefined) {
    if (context.principal === null && context.authMode === 'required') {
      return { ok: false, reason: 'a credential is required: put a token in the connection_init payload' };
    }
    return { ok: true, principal: context.principal, params };
  }
  if (typeof token !== 'string' || token === '') return { ok: false, reason: 'the credential is malformed' };
  try {
    return { ok: true, principal: await context.verifyToken(token), params };
  } catch (err) {
    const why = err instanceof CredentialError ? err.message : 'verification failed';
    return { ok: false, reason: `the token was not accepted: ${why}` };
  }
}

/** "Bearer <token>" -> the token; anything else -> null (malformed). */
function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^Bearer +(\S+)$/i.exec(value.trim());
  return match?.[1] ?? null;
}
