import { scopesOf, scopeValues } from '#broker/auth';
import { type FirstMessageCredential, type FirstMessageOutcome } from '#broker/gateway';
import { flatUuid } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { E, ProtocolViolation } from './errors.js';
import { type Dict } from './messages.js';
import { type RealmSettings } from './realm.js';
import { type Identity } from './wamp-session.js';
import { type StoredCraKey } from './store/cra-credentials.js';
import { craChallenge, craVerify, decoyKey, decoySalt, type CraSalt } from './wampcra.js';

/** What the transport already established, and how a HELLO's credential is checked. */
export interface Credentials {
  /** The handshake's principal: the session is authenticated as it, whatever HELLO asks. */
  readonly principal: Principal | null;
  /** False where the endpoint requires authentication: then no anonymous session, even if the realm allows it. */
  readonly anonymousAllowed: boolean;
  /** The first-message policy (ConnectionContext.authenticate) for a ticket: a token, or a password. */
  authenticate(credential: FirstMessageCredential): Promise<FirstMessageOutcome>;
  /** Reports a WAMP-CRA session's identity to the transport once WELCOME is sent (the gateway's `identify`). */
  readonly identify?: (principal: Principal) => void;
  /** Stored wampcra credentials, when the store is installed; the realm's configured users come first. */
  readonly craKey?: (authid: string) => Promise<StoredCraKey | null>;
}

export type AuthStep =
  | { readonly kind: 'welcome'; readonly identity: Identity }
  | { readonly kind: 'abort'; readonly reason: string; readonly message: string }
  | {
      readonly kind: 'challenge';
      readonly method: string;
      readonly extra: Dict;
      /** The identity when the AUTHENTICATE signature is good, null otherwise. Never rejects. */
      verify(signature: string): Promise<Identity | null>;
    };

const AUTHID_MAX = 256;

/**
 * A principal's role: its `authrole` claim (a JWT's) or else its first `wamp:role:<role>` scope (a stored
 * credential's), when that names a role of the realm; else the realm's authenticated role.
 */
export function roleOf(realm: RealmSettings, principal: Principal): string {
  const claimed = principal.claims['authrole'];
  const role = typeof claimed === 'string' ? claimed : scopeValues(scopesOf(principal), 'wamp:role')[0];
  return role !== undefined && realm.roles.has(role) ? role : realm.authenticatedRole;
}

function fromPrincipal(
  realm: RealmSettings,
  principal: Principal,
  authmethod: string,
  authprovider: string,
): Identity {
  return {
    authid: principal.subject,
    authrole: roleOf(realm, principal),
    authmethod,
    authprovider,
    principal,
  };
}

/**
 * Picks the authentication for a HELLO: the handshake's principal if there is one, else the first of the
 * client's `authmethods` (in its order) the realm offers: `ticket`, `wampcra`, `anonymous`. Throws
 * ProtocolViolation for auth details of the wrong type. A promise when a stored wampcra key must be
 * looked up first (it never rejects: a failed lookup is a challenge nobody can answer).
 */
export function startAuthentication(
  realm: RealmSettings,
  details: Dict,
  credentials: Credentials,
  session: number,
): AuthStep | Promise<AuthStep> {
  if (credentials.principal !== null) {
    return {
      kind: 'welcome',
      identity: fromPrincipal(realm, credentials.principal, 'handshake', 'handshake'),
    };
  }
  const requested = details['authmethods'] ?? ['anonymous'];
  const authid = details['authid'];
  if (!Array.isArray(requested)) throw new ProtocolViolation('HELLO.Details.authmethods must be a list');
  if (
    authid !== undefined &&
    (typeof authid !== 'string' || authid.length === 0 || authid.length > AUTHID_MAX)
  ) {
    throw new ProtocolViolation(`HELLO.Details.authid must be a string of 1-${AUTHID_MAX} characters`);
  }
  for (const method of requested) {
    if (method === 'ticket') return ticket(realm, authid, credentials);
    if (method === 'wampcra' && typeof authid === 'string')
      return wampcra(realm, authid, session, credentials);
    if (method === 'anonymous' && realm.anonymousRole !== null && credentials.anonymousAllowed) {
      return {
        kind: 'welcome',
        identity: {
          authid: flatUuid('anonymous-'),
          authrole: realm.anonymousRole,
          authmethod: 'anonymous',
          authprovider: 'static',
        },
      };
    }
  }
  return {
    kind: 'abort',
    reason: E.noAuthMethod,
    message: `none of the offered authmethods is available in realm ${realm.name}`,
  };
}

/** The ticket is a token, or (with an authid) that authid's password; every refusal is authentication_failed. */
function ticket(realm: RealmSettings, authid: unknown, credentials: Credentials): AuthStep {
  return {
    kind: 'challenge',
    method: 'ticket',
    extra: {},
    async verify(signature) {
      const token = await credentials.authenticate({ token: signature });
      if (token.ok && token.principal !== null)
        return fromPrincipal(realm, token.principal, 'ticket', 'token');
      // Not a token we accept; maybe a password.
      if (typeof authid !== 'string') return null;
      const password = Buffer.from(signature, 'utf8');
      const stored = await credentials.authenticate({ username: authid, password });
      return stored.ok && stored.principal !== null
        ? fromPrincipal(realm, stored.principal, 'ticket', 'password')
        : null;
    },
  };
}

function wampcra(
  realm: RealmSettings,
  authid: string,
  session: number,
  credentials: Credentials,
): AuthStep | Promise<AuthStep> {
  const user = realm.craUsers.get(authid);
  if (user === undefined && credentials.craKey !== undefined) {
    return credentials.craKey(authid).then(
      (stored) => storedWampcra(realm, authid, session, stored),
      () => storedWampcra(realm, authid, session, null),
    );
  }
  // An unknown authid gets a challenge too, signed with a key nobody has: it cannot tell unknown from wrong.
  const authrole = user?.role ?? realm.authenticatedRole;
  const identity =
    user === undefined ? null : { authid, authrole, authmethod: 'wampcra', authprovider: 'static' };
  return craStep(authid, authrole, session, user?.key ?? decoyKey(), user?.salt, identity);
}

function storedWampcra(
  realm: RealmSettings,
  authid: string,
  session: number,
  stored: StoredCraKey | null,
): AuthStep {
  // Unknown, revoked or expired: a salted challenge like a real one, so none of them can be told apart.
  if (stored === null)
    return craStep(authid, realm.authenticatedRole, session, decoyKey(), decoySalt(), null);
  const authrole = roleOf(realm, stored.principal);
  const salt = { salt: stored.salt, iterations: stored.iterations, keylen: stored.keylen };
  return craStep(authid, authrole, session, stored.key, salt, {
    authid,
    authrole,
    authmethod: 'wampcra',
    authprovider: 'store',
    principal: stored.principal,
  });
}

/** The CHALLENGE and its check; `identity` null means no signature can pass. */
function craStep(
  authid: string,
  authrole: string,
  session: number,
  key: string,
  salt: CraSalt | undefined,
  identity: Identity | null,
): AuthStep {
  const challenge = craChallenge(authid, authrole, session);
  const extra: Dict = { challenge };
  if (salt !== undefined) Object.assign(extra, salt);
  return {
    kind: 'challenge',
    method: 'wampcra',
    extra,
    verify: (signature) =>
      Promise.resolve(identity !== null && craVerify(key, challenge, signature) ? identity : null),
  };
}
