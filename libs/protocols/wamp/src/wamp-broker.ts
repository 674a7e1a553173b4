import { E } from './errors.js';
import { freshId, isId, randomId } from './ids.js';
import {
  type Args,
  type Dict,
  EVENT,
  type Kwargs,
  PUBLISH,
  PUBLISHED,
  SUBSCRIBE,
  SUBSCRIBED,
  UNSUBSCRIBE,
  UNSUBSCRIBED,
  withPayload,
} from './messages.js';
import { type Session } from './wamp-session.js';
import { UriIndex } from './uri-index.js';
import { isReserved, isValidUri, type MatchPolicy, parseMatch, type UriRule } from './uri.js';

interface Subscription {
  readonly id: number;
  readonly uri: string;
  readonly match: MatchPolicy;
  readonly subscribers: Set<Session>;
}

export interface BrokerOptions {
  readonly uriRule: UriRule;
  readonly maxSubscriptionsPerSession: number;
  /** Sees every client publication that was accepted (the bus bridge). */
  readonly published?: (topic: string, args: Args, kwargs: Kwargs, publisher: Session) => void;
  /** A subscription came (its first subscriber) or went (its last): the bus bridge attracts its topics. */
  readonly subscriptionChanged?: (match: MatchPolicy, uri: string, present: boolean) => void;
}

/** Who receives a publication, from PUBLISH.Options (publisher exclusion, black- and whitelisting). */
export interface Audience {
  readonly publisher: Session | null;
  readonly excludeMe: boolean;
  readonly exclude?: ReadonlySet<number>;
  readonly excludeAuthid?: ReadonlySet<string>;
  readonly excludeAuthrole?: ReadonlySet<string>;
  readonly eligible?: ReadonlySet<number>;
  readonly eligibleAuthid?: ReadonlySet<string>;
  readonly eligibleAuthrole?: ReadonlySet<string>;
  readonly disclose: boolean;
}

/**
 * A list-valued option as a set (lists can be long, and each subscriber is looked up in them): undefined
 * when absent, null when present but not a list of the right items.
 */
function listOption<T>(
  options: Dict,
  key: string,
  guard: (item: unknown) => item is T,
): ReadonlySet<T> | undefined | null {
  const value = options[key];
  if (value === undefined) return undefined;
  return Array.isArray(value) && value.every((item: unknown) => guard(item)) ? new Set(value as T[]) : null;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** The pub/sub half of a realm: exact, prefix and wildcard subscriptions, each indexed for its lookup. */
export class Broker {
  private readonly byId = new Map<number, Subscription>();
  private readonly index = new UriIndex<Subscription>();

  constructor(private readonly options: BrokerOptions) {}

  subscribe(session: Session, request: number, options: Dict, uri: unknown): void {
    const match = parseMatch(options['match']);
    if (match === null)
      return session.error(SUBSCRIBE, request, E.invalidArgument, 'match must be exact, prefix or wildcard');
    if (!isValidUri(uri, this.options.uriRule, match)) {
      return session.error(SUBSCRIBE, request, E.invalidUri, `not a valid ${match} topic URI`);
    }
    if (!session.permissions.allows('subscribe', uri)) {
      return session.error(
        SUBSCRIBE,
        request,
        E.notAuthorized,
        `role ${session.identity.authrole} may not subscribe to ${uri}`,
      );
    }
    if (session.busAccess !== null && !session.busAccess.maySubscribe(match, uri)) {
      return session.error(SUBSCRIBE, request, E.notAuthorized, `not authorized to subscribe to ${uri}`);
    }
    let subscription = this.index.get(match, uri);
    if (subscription?.subscribers.has(session)) return session.send([SUBSCRIBED, request, subscription.id]);
    if (session.subscriptions.size >= this.options.maxSubscriptionsPerSession) {
      return session.error(
        SUBSCRIBE,
        request,
        E.limitExceeded,
        `at most ${this.options.maxSubscriptionsPerSession} subscriptions per session`,
      );
    }
    if (subscription === undefined) {
      subscription = { id: freshId(this.byId), uri, match, subscribers: new Set() };
      this.index.set(match, uri, subscription);
      this.byId.set(subscription.id, subscription);
      this.options.subscriptionChanged?.(match, uri, true);
    }
    subscription.subscribers.add(session);
    session.subscriptions.set(subscription.id, subscription);
    session.send([SUBSCRIBED, request, subscription.id]);
  }

  unsubscribe(session: Session, request: number, id: number): void {
    const subscription = this.byId.get(id);
    if (subscription === undefined || !subscription.subscribers.has(session)) {
      return session.error(
        UNSUBSCRIBE,
        request,
        E.noSuchSubscription,
        `no subscription ${id} in this session`,
      );
    }
    this.drop(session, subscription);
    session.send([UNSUBSCRIBED, request]);
  }

  publish(session: Session, request: number, options: Dict, uri: unknown, args: Args, kwargs: Kwargs): void {
    const acknowledge = options['acknowledge'] === true;
    // Errors are only answered to publications that asked for an acknowledgement (basic profile).
    const refuse = (error: string, message: string): void => {
      if (acknowledge) session.error(PUBLISH, request, error, message);
    };
    if (!isValidUri(uri, this.options.uriRule) || isReserved(uri)) {
      return refuse(E.invalidUri, 'not a valid topic URI (wamp.* is reserved)');
    }
    if (!session.permissions.allows('publish', uri)) {
      return refuse(E.notAuthorized, `role ${session.identity.authrole} may not publish to ${uri}`);
    }
    if (session.busAccess !== null && !session.busAccess.mayPublish(uri)) {
      return refuse(E.notAuthorized, `not authorized to publish to ${uri}`);
    }
    const lists = {
      exclude: listOption(options, 'exclude', isId),
      excludeAuthid: listOption(options, 'exclude_authid', isString),
      excludeAuthrole: listOption(options, 'exclude_authrole', isString),
      eligible: listOption(options, 'eligible', isId),
      eligibleAuthid: listOption(options, 'eligible_authid', isString),
      eligibleAuthrole: listOption(options, 'eligible_authrole', isString),
    };
    const given = Object.values(lists);
    if (given.includes(null)) {
      return refuse(
        E.invalidArgument,
        'exclude and eligible must be lists of session IDs, authids or authroles',
      );
    }
    const audience = {
      ...(lists as { [K in keyof typeof lists]: Exclude<(typeof lists)[K], null> }),
      publisher: session,
      excludeMe: options['exclude_me'] !== false,
      disclose: options['disclose_me'] === true,
    };
    const { publication } = this.dispatch(uri, args, kwargs, audience);
    if (acknowledge) session.send([PUBLISHED, request, publication]);
    // The bus has no sessions to hold eligible or exclude lists against: bridged, it would reach everyone.
    if (given.every((list) => list === undefined)) {
      this.options.published?.(uri, args, kwargs, session);
    }
  }

  /**
   * Delivers a publication (from a client, the router's meta events or the bus): its ID, and how many
   * sessions it reached.
   */
  dispatch(
    topic: string,
    args: Args,
    kwargs: Kwargs,
    audience: Audience,
  ): { publication: number; reached: number } {
    const publication = randomId();
    let reached = 0;
    for (const subscription of this.index.matching(topic)) {
      reached += this.deliver(subscription, publication, topic, args, kwargs, audience);
    }
    return { publication, reached };
  }

  /** Whether anyone subscribed at all: lets the bus bridge skip mapping messages nobody can receive. */
  get hasSubscriptions(): boolean {
    return this.byId.size > 0;
  }

  /** Subscriptions (distinct match and URI) in this realm. */
  get size(): number {
    return this.byId.size;
  }

  /** Undoes everything a leaving session subscribed. */
  leave(session: Session): void {
    for (const held of session.subscriptions.values()) this.drop(session, held as Subscription);
  }

  private deliver(
    subscription: Subscription,
    publication: number,
    topic: string,
    args: Args,
    kwargs: Kwargs,
    audience: Audience,
  ): number {
    const details: Dict = {};
    const pattern = subscription.match !== 'exact';
    if (pattern) details['topic'] = topic;
    const publisher = audience.publisher;
    if (audience.disclose && publisher !== null) {
      details['publisher'] = publisher.id;
      details['publisher_authid'] = publisher.identity.authid;
      details['publisher_authrole'] = publisher.identity.authrole;
    }
    let text: string | null = null;
    let reached = 0;
    for (const subscriber of subscription.subscribers) {
      if (!this.eligible(subscriber, audience)) continue;
      // A pattern subscription was authorized on its pattern; each concrete topic is checked too.
      if (pattern && !subscriber.permissions.allows('subscribe', topic)) continue;
      // The bus realm's topic rules may cut through any subscription, an exact one to a prefix rule too.
      const access = subscriber.busAccess;
      if (access !== null && access.checksReads && !access.mayRead(topic)) continue;
      text ??= JSON.stringify(withPayload([EVENT, subscription.id, publication, details], args, kwargs));
      subscriber.sendEvent(text);
      reached++;
    }
    return reached;
  }

  private eligible(subscriber: Session, a: Audience): boolean {
    if (subscriber === a.publisher && a.excludeMe) return false;
    const { authid, authrole } = subscriber.identity;
    if (a.exclude?.has(subscriber.id) || a.excludeAuthid?.has(authid) || a.excludeAuthrole?.has(authrole)) {
      return false;
    }
    if (a.eligible !== undefined && !a.eligible.has(subscriber.id)) return false;
    if (a.eligibleAuthid !== undefined && !a.eligibleAuthid.has(authid)) return false;
    if (a.eligibleAuthrole !== undefined && !a.eligibleAuthrole.has(authrole)) return false;
    return true;
  }

  private drop(session: Session, subscription: Subscription): void {
    subscription.subscribers.delete(session);
    session.subscriptions.delete(subscription.id);
    if (subscription.subscribers.size === 0) {
      this.index.delete(subscription.match, subscription.uri);
      this.byId.delete(subscription.id);
      this.options.subscriptionChanged?.(subscription.match, subscription.uri, false);
    }
  }
}
