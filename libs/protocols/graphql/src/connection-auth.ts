import { type ConnectionContext } from '#broker/gateway';
import { type Principal } from '#broker/handshake';

export type InitAuthContext = Pick<ConnectionContext, 'authMode' | 'authenticate'>;

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
 * The connection_init credential both protocols share: `token`, or `authorization` with a bearer
 * token, for the first-message policy (ConnectionContext.authenticate), whose principal replaces the
 * handshake's. On a 'none' endpoint the payload is not read for one, as the handshake reads no
 * carrier there. The returned params never hold the credential, so resolvers and logs cannot leak it.
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
  if (token !== undefined && (typeof token !== 'string' || token === ''))
    return { ok: false, reason: 'the credential is malformed' };
  const outcome = await context.authenticate(token === undefined ? null : { token });
  if (outcome.ok) return { ok: true, principal: outcome.principal, params };
  if (outcome.refusal === 'missing')
    return { ok: false, reason: 'a credential is required: put a token in the connection_init payload' };
  return { ok: false, reason: outcome.reason };
}

/** "Bearer <token>" -> the token; anything else -> null (malformed). */
function bearer(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^Bearer +(\S+)$/i.exec(value.trim());
  return match?.[1] ?? null;
}
