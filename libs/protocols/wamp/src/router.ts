import { type Clock } from '#broker/kit';
import { type Principal } from '#broker/handshake';
import { type BusAccess } from './bus-access.js';
import { type Args, type Kwargs } from './messages.js';
import { Realm, type Limits, type RealmSettings } from './realm.js';
import { type RemoteDealer } from './remote.js';
import { type Session } from './wamp-session.js';
import { type MatchPolicy } from './uri.js';

export interface RouterLimits extends Limits {
  /** HELLO to WELCOME, challenge included; a session that takes longer is aborted. */
  readonly authTimeoutMs: number;
  /** Realms at most, configured ones included, when realms are created on first use. */
  readonly maxRealms: number;
}

export interface RouterOptions {
  readonly realms: readonly RealmSettings[];
  /** Settings for a realm created on first use (its name is replaced); null: unknown realms are refused. */
  readonly autoRealm: RealmSettings | null;
  readonly limits: RouterLimits;
  /** Time for the router's timers (call timeouts, the authentication deadline). */
  readonly clock: Clock;
  /** Every accepted client publication, for the bus bridge. */
  readonly published?: (realm: string, topic: string, args: Args, kwargs: Kwargs, publisher: Session) => void;
  /** Cluster mode: each realm's way to other nodes' registrations. */
  readonly remote?: (realm: string) => RemoteDealer;
  /** The bus realm's authorization of a joining session (null: the realm shares nothing with the bus). */
  readonly busAccess?: (realm: string, principal: Principal | null) => BusAccess | null;
  /** A topic subscription came or went in a realm (the bus bridge attracts its topics). */
  readonly subscriptionChanged?: (realm: string, match: MatchPolicy, uri: string, present: boolean) => void;
}

/** The realms of one router process. Sessions (see `SessionProtocol`) find their realm here at HELLO. */
export class Router {
  private readonly realms = new Map<string, Realm>();

  constructor(readonly options: RouterOptions) {
    for (const settings of options.realms) this.realms.set(settings.name, this.create(settings));
  }

  get limits(): RouterLimits {
    return this.options.limits;
  }

  get clock(): Clock {
    return this.options.clock;
  }

  /** The realm named, created on first use when the router allows that; undefined otherwise. */
  realm(name: string): Realm | undefined {
    const found = this.realms.get(name);
    if (found !== undefined) return found;
    const template = this.options.autoRealm;
    if (template === null || this.realms.size >= this.options.limits.maxRealms) return undefined;
    const realm = this.create({ ...template, name });
    this.realms.set(name, realm);
    return realm;
  }

  /** Live counts for the dashboard: realms, and the sessions, registrations and subscriptions in them. */
  figures(): { realms: number; sessions: number; registrations: number; subscriptions: number } {
    const figures = { realms: this.realms.size, sessions: 0, registrations: 0, subscriptions: 0 };
    for (const realm of this.realms.values()) {
      figures.sessions += realm.sessions.size;
      figures.registrations += realm.dealer.registrations.size;
      figures.subscriptions += realm.broker.size;
    }
    return figures;
  }

  /** Only realms that exist: publications from the bus never create one. */
  existingRealm(name: string): Realm | undefined {
    return this.realms.get(name);
  }

  private create(settings: RealmSettings): Realm {
    const { published, remote, subscriptionChanged } = this.options;
    return new Realm(settings, this.options.limits, {
      clock: this.options.clock,
      ...(published && { published }),
      ...(remote && { remote }),
      ...(subscriptionChanged && { subscriptionChanged }),
    });
  }
}
