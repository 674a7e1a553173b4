import { type Clock } from '#broker/kit';
import { Broker } from './wamp-broker.js';
import { Dealer } from './dealer.js';
import { type Args, type Kwargs } from './messages.js';
import { ON_JOIN, ON_LEAVE, sessionMetaProcedures } from './meta.js';
import { type Permissions } from './permissions.js';
import { type RemoteDealer } from './remote.js';
import { type Session } from './wamp-session.js';
import { type MatchPolicy, type UriRule } from './uri.js';
import { type CraSalt } from './wampcra.js';

/** A wampcra user, its key already derived (salted WAMP-CRA), so no secret is kept beyond what signing needs. */
export interface CraUser {
  readonly authid: string;
  readonly role: string;
  readonly key: string;
  readonly salt?: CraSalt;
}

export interface RealmSettings {
  readonly name: string;
  readonly uriRule: UriRule;
  /** The role of anonymous sessions; null: anonymous sessions are refused. */
  readonly anonymousRole: string | null;
  /** The role of sessions authenticated by a token or a password, unless their claims name another role. */
  readonly authenticatedRole: string;
  readonly roles: ReadonlyMap<string, Permissions>;
  readonly craUsers: ReadonlyMap<string, CraUser>;
}

export interface Limits {
  readonly maxSubscriptionsPerSession: number;
  readonly maxRegistrationsPerSession: number;
  readonly maxPendingCallsPerSession: number;
}

export interface RealmHooks {
  readonly clock: Clock;
  /** A client publication in this realm, for the bus bridge. */
  readonly published?: (realm: string, topic: string, args: Args, kwargs: Kwargs, publisher: Session) => void;
  /** Cluster mode: the realm's way to other nodes' registrations. */
  readonly remote?: (realm: string) => RemoteDealer;
  /** A topic subscription came or went in this realm (the bus bridge attracts its topics). */
  readonly subscriptionChanged?: (realm: string, match: MatchPolicy, uri: string, present: boolean) => void;
}

/** One routing and administrative domain: its sessions, broker and dealer, and the session meta events. */
export class Realm {
  readonly sessions = new Map<number, Session>();
  readonly broker: Broker;
  readonly dealer: Dealer;

  constructor(
    readonly settings: RealmSettings,
    limits: Limits,
    hooks: RealmHooks,
  ) {
    const { published, subscriptionChanged } = hooks;
    this.broker = new Broker({
      uriRule: settings.uriRule,
      maxSubscriptionsPerSession: limits.maxSubscriptionsPerSession,
      ...(published && {
        published: (topic, args, kwargs, publisher) =>
          published(settings.name, topic, args, kwargs, publisher),
      }),
      ...(subscriptionChanged && {
        subscriptionChanged: (match, uri, present) => subscriptionChanged(settings.name, match, uri, present),
      }),
    });
    this.dealer = new Dealer({
      uriRule: settings.uriRule,
      maxRegistrationsPerSession: limits.maxRegistrationsPerSession,
      maxPendingCallsPerSession: limits.maxPendingCallsPerSession,
      procedures: sessionMetaProcedures(this.sessions),
      clock: hooks.clock,
      ...(hooks.remote && { remote: hooks.remote(settings.name) }),
    });
  }

  get name(): string {
    return this.settings.name;
  }

  /** Call after the WELCOME went out, so the joining session's own on_join subscription (none yet) is moot. */
  join(session: Session): void {
    this.sessions.set(session.id, session);
    this.announce(ON_JOIN, [session.details()]);
  }

  leave(session: Session): void {
    if (!this.sessions.delete(session.id)) return;
    session.left = true;
    this.broker.leave(session);
    this.dealer.leave(session);
    this.announce(ON_LEAVE, [session.id, session.identity.authid, session.identity.authrole]);
  }

  private announce(topic: string, args: Args): void {
    this.broker.dispatch(topic, args, undefined, { publisher: null, excludeMe: false, disclose: false });
  }
}
