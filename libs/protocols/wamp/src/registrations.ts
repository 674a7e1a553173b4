import { E } from './errors.js';
import { freshId } from './ids.js';
import { type Dict, REGISTER, REGISTERED, UNREGISTER, UNREGISTERED } from './messages.js';
import { type RemoteDealer } from './remote.js';
import { type Session } from './wamp-session.js';
import { UriIndex } from './uri-index.js';
import { isReserved, isValidUri, type MatchPolicy, parseMatch, type UriRule } from './uri.js';

export type InvokePolicy = 'single' | 'roundrobin' | 'random' | 'first' | 'last';
const INVOKE_POLICIES: readonly string[] = ['single', 'roundrobin', 'random', 'first', 'last'];

export interface Registration {
  readonly id: number;
  readonly uri: string;
  readonly match: MatchPolicy;
  readonly invoke: InvokePolicy;
  /** In registration order: `first` and `last` pick by it, `roundrobin` walks it. */
  readonly callees: Session[];
  next: number;
}

export interface RegistrationOptions {
  readonly uriRule: UriRule;
  readonly maxRegistrationsPerSession: number;
  /** Cluster mode: a new registration is claimed across the nodes before REGISTERED. */
  readonly remote?: RemoteDealer;
}

/** A realm's procedures: exact, prefix and wildcard registrations, shared ones with their invoke policy. */
export class Registrations {
  private readonly byId = new Map<number, Registration>();
  private readonly index = new UriIndex<Registration>();

  constructor(private readonly options: RegistrationOptions) {}

  /** Procedures registered on this node. */
  get size(): number {
    return this.byId.size;
  }

  register(session: Session, request: number, options: Dict, uri: unknown): void {
    const match = parseMatch(options['match']);
    const invoke = options['invoke'] ?? 'single';
    if (match === null) {
      return session.error(REGISTER, request, E.invalidArgument, 'match must be exact, prefix or wildcard');
    }
    if (typeof invoke !== 'string' || !INVOKE_POLICIES.includes(invoke)) {
      return session.error(
        REGISTER,
        request,
        E.invalidArgument,
        `invoke must be one of ${INVOKE_POLICIES.join(', ')}`,
      );
    }
    if (!isValidUri(uri, this.options.uriRule, match) || isReserved(uri)) {
      return session.error(
        REGISTER,
        request,
        E.invalidUri,
        `not a valid ${match} procedure URI (wamp.* is reserved)`,
      );
    }
    if (!session.permissions.allows('register', uri)) {
      return session.error(
        REGISTER,
        request,
        E.notAuthorized,
        `role ${session.identity.authrole} may not register ${uri}`,
      );
    }
    const limit = this.options.maxRegistrationsPerSession;
    if (session.registrations.size + session.pendingRegistrations >= limit) {
      return session.error(REGISTER, request, E.limitExceeded, `at most ${limit} registrations per session`);
    }
    const remote = this.options.remote;
    if (remote !== undefined && this.index.get(match, uri) === undefined) {
      // New here: another node may hold it. REGISTERED waits for the claim, so of two nodes racing for
      // one exclusive URI exactly one says REGISTERED.
      session.pendingRegistrations++;
      void remote.claim(match, uri, invoke).then(
        (ours) => this.claimed(session, request, match, uri, invoke as InvokePolicy, ours),
        () => this.claimed(session, request, match, uri, invoke as InvokePolicy, false),
      );
      return;
    }
    this.add(session, request, match, uri, invoke as InvokePolicy);
  }

  private claimed(
    session: Session,
    request: number,
    match: MatchPolicy,
    uri: string,
    invoke: InvokePolicy,
    ours: boolean,
  ): void {
    session.pendingRegistrations--;
    if (session.left) {
      if (ours && this.index.get(match, uri) === undefined) this.options.remote?.release(match, uri);
      return;
    }
    if (!ours) {
      const message = `${uri} is already registered on another node`;
      return session.error(REGISTER, request, E.procedureAlreadyExists, message);
    }
    this.add(session, request, match, uri, invoke);
  }

  private add(
    session: Session,
    request: number,
    match: MatchPolicy,
    uri: string,
    invoke: InvokePolicy,
  ): void {
    let registration = this.index.get(match, uri);
    if (registration !== undefined) {
      if (
        registration.invoke === 'single' ||
        registration.invoke !== invoke ||
        registration.callees.includes(session)
      ) {
        const message = `${uri} is already registered (invoke ${registration.invoke})`;
        return session.error(REGISTER, request, E.procedureAlreadyExists, message);
      }
    } else {
      registration = {
        id: freshId(this.byId),
        uri,
        match,
        invoke,
        callees: [],
        next: 0,
      };
      this.index.set(match, uri, registration);
      this.byId.set(registration.id, registration);
    }
    registration.callees.push(session);
    session.registrations.set(registration.id, registration);
    session.send([REGISTERED, request, registration.id]);
  }

  /** The registration of `uri` under `match` here, if any. */
  find(match: MatchPolicy, uri: string): Registration | undefined {
    return this.index.get(match, uri);
  }

  unregister(session: Session, request: number, id: number): void {
    const registration = this.byId.get(id);
    if (registration === undefined || !registration.callees.includes(session)) {
      return session.error(
        UNREGISTER,
        request,
        E.noSuchRegistration,
        `no registration ${id} in this session`,
      );
    }
    this.drop(session, registration);
    session.send([UNREGISTERED, request]);
  }

  /**
   * Where a call to `uri` goes: the first registration matching it (exact, the longest prefix, then the
   * wildcard with the most components before its wildcards) and its callee by the invoke policy. A
   * pattern registration takes the call only through a callee that may register `uri` itself, as a
   * pattern subscription gets only the events its subscriber may subscribe to; else the next one is tried.
   */
  route(uri: string): { readonly registration: Registration; readonly callee: Session } | undefined {
    for (const registration of this.index.matching(uri)) {
      if (registration.match === 'exact') return { registration, callee: this.pick(registration) };
      const allowed = registration.callees.filter((callee) => callee.permissions.allows('register', uri));
      if (allowed.length === registration.callees.length)
        return { registration, callee: this.pick(registration) };
      const callee = allowed[0];
      if (callee !== undefined) return { registration, callee };
    }
    return undefined;
  }

  /** The callee for the next call, by the registration's invoke policy. A registration always has one. */
  private pick(registration: Registration): Session {
    const callees = registration.callees;
    let at = 0;
    if (registration.invoke === 'roundrobin') {
      at = registration.next % callees.length;
      registration.next = at + 1;
    } else if (registration.invoke === 'random') {
      at = Math.floor(Math.random() * callees.length);
    } else if (registration.invoke === 'last') {
      at = callees.length - 1;
    }
    const callee = callees[at];
    if (callee === undefined) throw new Error(`registration ${registration.id} has no callee`);
    return callee;
  }

  leave(session: Session): void {
    for (const held of session.registrations.values()) this.drop(session, held as Registration);
  }

  private drop(session: Session, registration: Registration): void {
    const at = registration.callees.indexOf(session);
    if (at < 0) return;
    registration.callees.splice(at, 1);
    // Round robin continues with the callee that followed the one removed.
    if (at < registration.next) registration.next--;
    session.registrations.delete(registration.id);
    if (registration.callees.length === 0) {
      this.index.delete(registration.match, registration.uri);
      this.byId.delete(registration.id);
      this.options.remote?.release(registration.match, registration.uri);
    }
  }
}
