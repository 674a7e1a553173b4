import { CLOSE, type EventPeerPort, type TimerHandle } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type AuthStep, type Credentials, startAuthentication } from './authenticate.js';
import { E, ProtocolViolation } from './errors.js';
import { randomId } from './ids.js';
import * as M from './messages.js';
import { Permissions } from './permissions.js';
import { type Realm } from './realm.js';
import { type Router } from './router.js';
import { type Identity, publicIdentity, Session } from './wamp-session.js';
import { isValidUri } from './uri.js';

/** Notable moments, for logs; they never carry a credential. */
export interface SessionEvents {
  joined?(session: Session): void;
  left?(session: Session): void;
  aborted?(reason: string, message: string): void;
  /** A bug surfaced outside a message handler (after an asynchronous verification). */
  failed?(err: unknown): void;
}

/** Announced in WELCOME: exactly the advanced features this router implements. */
export const ROUTER_ROLES = {
  broker: {
    features: {
      pattern_based_subscription: true,
      publisher_exclusion: true,
      publisher_identification: true,
      subscriber_blackwhite_listing: true,
      session_meta_api: true,
    },
  },
  dealer: {
    features: {
      call_canceling: true,
      call_timeout: true,
      caller_identification: true,
      pattern_based_registration: true,
      progressive_call_results: true,
      shared_registration: true,
      session_meta_api: true,
    },
  },
} as const;

const DENY_ALL = new Permissions([]);

type State = 'hello' | 'challenge' | 'verifying' | 'open' | 'closed';

/**
 * One transport's WAMP life, sans-IO: text in, text out. HELLO, authentication, WELCOME, then the
 * broker and dealer; GOODBYE returns to the HELLO state; any protocol violation ABORTs and closes.
 */
export class SessionProtocol {
  private state: State = 'hello';
  private realm: Realm | null = null;
  private session: Session | null = null;
  private sessionId = 0;
  private roles: M.Dict = {};
  private challenge: Extract<AuthStep, { kind: 'challenge' }> | null = null;
  /** Bumped whenever the session ends, so a verification finishing late does nothing. */
  private attempt = 0;
  private authTimer: TimerHandle | null = null;

  constructor(
    private readonly router: Router,
    private readonly peer: EventPeerPort,
    private readonly credentials: Credentials,
    private readonly events: SessionEvents = {},
  ) {
    this.armAuthTimer();
  }

  receive(text: string): void {
    if (this.state === 'closed') return;
    const decoded = M.decode(text);
    if (!decoded.ok) return this.violation(decoded.problem);
    try {
      this.handle(decoded.message);
    } catch (err) {
      if (!(err instanceof ProtocolViolation)) throw err;
      this.violation(err.message);
    }
  }

  receiveBinary(): void {
    this.violation('binary messages are not used by wamp.2.json: send JSON text', CLOSE.unsupportedData);
  }

  /** The transport closed: the session leaves its realm. */
  closed(): void {
    this.end();
  }

  /** Whether this is a callee: its session holds a registration, or waits for one. */
  get registers(): boolean {
    const session = this.session;
    return session !== null && session.registrations.size + session.pendingRegistrations > 0;
  }

  /** The router is shutting down: an open session is told so before the transport closes. */
  shutdown(): void {
    if (this.state === 'open') this.peer.send(JSON.stringify([M.GOODBYE, {}, E.systemShutdown]));
    this.end();
  }

  private handle(m: M.ClientMessage): void {
    if (m.type === M.ABORT) {
      // ABORT is never answered.
      this.end();
      return this.peer.close(CLOSE.normal, 'aborted by the client');
    }
    switch (this.state) {
      case 'hello':
        if (m.type !== M.HELLO) throw new ProtocolViolation(`${M.messageName(m.type)} before WELCOME`);
        return this.hello(m.realm, m.details);
      case 'challenge':
        if (m.type !== M.AUTHENTICATE)
          throw new ProtocolViolation(`${M.messageName(m.type)} while a CHALLENGE is unanswered`);
        return this.authenticate(m.signature);
      case 'verifying':
        throw new ProtocolViolation(`${M.messageName(m.type)} before WELCOME`);
      case 'open':
        return this.route(m);
    }
  }

  private hello(realmName: unknown, details: M.Dict): void {
    if (!isValidUri(realmName, 'loose')) throw new ProtocolViolation('HELLO.Realm must be a URI');
    const realm = this.router.realm(realmName);
    if (realm === undefined) return this.abort(E.noSuchRealm, `no realm ${realmName}`);
    const roles = details['roles'];
    this.roles =
      typeof roles === 'object' && roles !== null && !Array.isArray(roles) ? (roles as M.Dict) : {};
    this.realm = realm;
    this.sessionId = randomId();
    const step = startAuthentication(realm.settings, details, this.credentials, this.sessionId);
    if (step instanceof Promise) {
      // A stored key is being looked up: anything the client sends meanwhile is before WELCOME.
      this.state = 'verifying';
      const attempt = this.attempt;
      void step.then((next) => {
        if (this.state === 'verifying' && attempt === this.attempt) this.proceed(next);
      });
      return;
    }
    this.proceed(step);
  }

  private proceed(step: AuthStep): void {
    if (step.kind === 'abort') return this.abort(step.reason, step.message);
    if (step.kind === 'welcome') return this.welcome(step.identity);
    this.challenge = step;
    this.state = 'challenge';
    this.peer.send(JSON.stringify([M.CHALLENGE, step.method, step.extra]));
  }

  private authenticate(signature: string): void {
    const challenge = this.challenge;
    if (challenge === null) throw new Error('challenge state without a challenge');
    this.challenge = null;
    this.state = 'verifying';
    const attempt = this.attempt;
    const failed = `${challenge.method} authentication failed`;
    challenge
      .verify(signature)
      .then((identity) => {
        if (this.state !== 'verifying' || attempt !== this.attempt) return;
        if (identity === null) return this.abort(E.authenticationFailed, failed);
        this.welcome(identity);
      })
      // Nothing here may become an unhandled rejection: that would stop the process, not this session.
      .catch((err: unknown) => {
        this.events.failed?.(err);
        this.abort(E.authenticationFailed, failed);
      });
  }

  private welcome(identity: Identity): void {
    const realm = this.realm;
    if (realm === null) throw new Error('WELCOME without a realm');
    // A handshake principal and a ticket's are known to the gateway already (the first-message
    // policy reports the latter); an anonymous session has nobody to name.
    const principal = principalOf(identity);
    if (identity.authmethod === 'wampcra' && principal !== null) this.credentials.identify?.(principal);
    const permissions = realm.settings.roles.get(identity.authrole) ?? DENY_ALL;
    const busAccess = this.router.options.busAccess?.(realm.name, principal) ?? null;
    const session = new Session(
      this.sessionId,
      realm.name,
      identity,
      permissions,
      this.roles,
      this.peer,
      busAccess,
    );
    this.cancelAuthTimer();
    this.session = session;
    this.state = 'open';
    session.send([
      M.WELCOME,
      session.id,
      { roles: ROUTER_ROLES, realm: realm.name, ...publicIdentity(identity) },
    ]);
    realm.join(session);
    this.events.joined?.(session);
  }

  private route(m: M.ClientMessage): void {
    const session = this.session;
    const realm = this.realm;
    if (session === null || realm === null) throw new Error('open state without a session');
    const { broker, dealer } = realm;
    switch (m.type) {
      case M.HELLO:
        throw new ProtocolViolation('HELLO in an established session');
      case M.AUTHENTICATE:
        throw new ProtocolViolation('AUTHENTICATE in an established session');
      case M.GOODBYE:
        session.send([M.GOODBYE, {}, E.goodbyeAndOut]);
        this.leave();
        this.state = 'hello';
        return this.armAuthTimer();
      case M.PUBLISH:
        return broker.publish(session, m.request, m.options, m.uri, m.args, m.kwargs);
      case M.SUBSCRIBE:
        return broker.subscribe(session, m.request, m.options, m.uri);
      case M.UNSUBSCRIBE:
        return broker.unsubscribe(session, m.request, m.id);
      case M.CALL:
        return dealer.call(session, m.request, m.options, m.uri, m.args, m.kwargs);
      case M.CANCEL:
        return dealer.cancel(session, m.request, m.options);
      case M.REGISTER:
        return dealer.register(session, m.request, m.options, m.uri);
      case M.UNREGISTER:
        return dealer.unregister(session, m.request, m.id);
      case M.YIELD:
        return dealer.yield(session, m.request, m.options, m.args, m.kwargs);
      case M.ERROR:
        return dealer.error(session, m.requestType, m.request, m.details, m.error, m.args, m.kwargs);
    }
  }

  private cancelAuthTimer(): void {
    if (this.authTimer !== null) this.router.clock.cancel(this.authTimer);
    this.authTimer = null;
  }

  private armAuthTimer(): void {
    const ms = this.router.limits.authTimeoutMs;
    this.authTimer = this.router.clock.after(ms, () =>
      this.abort(E.authenticationFailed, `no WELCOME within ${ms} ms`),
    );
  }

  private violation(message: string, code: number = CLOSE.protocolError): void {
    if (this.state === 'closed') return;
    this.peer.send(JSON.stringify([M.ABORT, { message }, E.protocolViolation]));
    this.events.aborted?.(E.protocolViolation, message);
    this.end();
    this.peer.close(code, 'protocol violation');
  }

  private abort(reason: string, message: string): void {
    if (this.state === 'closed') return;
    this.peer.send(JSON.stringify([M.ABORT, { message }, reason]));
    this.events.aborted?.(reason, message);
    this.end();
    this.peer.close(CLOSE.normal, 'session aborted');
  }

  private leave(): void {
    const session = this.session;
    if (session === null) return;
    this.session = null;
    this.realm?.leave(session);
    this.events.left?.(session);
  }

  private end(): void {
    if (this.state === 'closed') return;
    this.leave();
    this.state = 'closed';
    this.attempt++;
    this.challenge = null;
    this.cancelAuthTimer();
  }
}

/** Who the session is to the rest of the broker: its credential, or a static WAMP-CRA user by its authid. */
function principalOf(identity: Identity): Principal | null {
  if (identity.principal !== undefined) return identity.principal;
  if (identity.authmethod === 'anonymous') return null;
  const { authid, authrole, authmethod } = identity;
  return { subject: authid, claims: { authrole, authmethod }, carrier: 'first-message' };
}
