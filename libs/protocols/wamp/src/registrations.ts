import { E } from './errors.js';
import { freshId } from './ids.js';
import { type Dict, REGISTER, REGISTERED, UNREGISTER, UNREGISTERED } from './messages.js';
import { type Session } from './session.js';
import {
  isReserved,
  isValidUri,
  type MatchPolicy,
  parseMatch,
  type UriRule,
  wildcardMatches,
} from './uri.js';

export type InvokePolicy = 'single' | 'roundrobin' | 'random' | 'first' | 'last';
const INVOKE_POLICIES: readonly string[] = ['single', 'roundrobin', 'random', 'first', 'last'];

export interface Registration {
  readonly id: number;
  readonly uri: string;
  readonly match: MatchPolicy;
  readonly parts: readonly string[];
  readonly invoke: InvokePolicy;
  /** In registration order: `first` and `last` pick by it, `roundrobin` walks it. */
  readonly callees: Session[];
  next: number;
}

export interface RegistrationOptions {
  readonly uriRule: UriRule;
  readonly maxRegistrationsPerSession: number;
}

/** A realm's procedures: exact, prefix and wildcard registrations, shared ones with their invoke policy. */
export class Registrations {
  private readonly byId = new Map<number, Registration>();
  private readonly exact = new Map<string, Registration>();
  private readonly prefix = new Map<string, Registration>();
  private readonly wildcard = new Map<string, Registration>();

  constructor(private readonly options: RegistrationOptions) {}

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
    if (session.registrations.size >= limit) {
      return session.error(REGISTER, request, E.limitExceeded, `at most ${limit} registrations per session`);
    }
    const index = this.index(match);
    let registration = index.get(uri);
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
      const policy = invoke as InvokePolicy;
      registration = {
        id: freshId(this.byId),
        uri,
        match,
        parts: uri.split('.'),
        invoke: policy,
        callees: [],
        next: 0,
      };
      index.set(uri, registration);
      this.byId.set(registration.id, registration);
    }
    registration.callees.push(session);
    session.registrations.set(registration.id, registration);
    session.send([REGISTERED, request, registration.id]);
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

  /** Exact first, then the longest prefix, then the first wildcard registered (advanced profile order). */
  find(uri: string): Registration | undefined {
    const exact = this.exact.get(uri);
    if (exact !== undefined) return exact;
    for (let end = uri.length; end > 0 && this.prefix.size > 0; end--) {
      const registration = this.prefix.get(uri.slice(0, end));
      if (registration !== undefined) return registration;
    }
    if (this.wildcard.size === 0) return undefined;
    const parts = uri.split('.');
    for (const registration of this.wildcard.values()) {
      if (wildcardMatches(registration.parts, parts)) return registration;
    }
    return undefined;
  }

  /** The callee for the next call, by the registration's invoke policy. A registration always has one. */
  pick(registration: Registration): Session {
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

  private index(match: MatchPolicy): Map<string, Registration> {
    return match === 'exact' ? this.exact : match === 'prefix' ? this.prefix : this.wildcard;
  }

  private drop(session: Session, registration: Registration): void {
    const at = registration.callees.indexOf(session);
    if (at < 0) return;
    registration.callees.splice(at, 1);
    // Round robin continues with the callee that followed the one removed.
    if (at < registration.next) registration.next--;
    session.registrations.delete(registration.id);
    if (registration.callees.length === 0) {
      this.index(registration.match).delete(registration.uri);
      this.byId.delete(registration.id);
    }
  }
}
