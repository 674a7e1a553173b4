import { assertTopicFilter, filtersOverlap, filterWithin, topicMatches } from '#broker/bus';
import { type AuthorizationConfig, type TopicRuleConfig } from '#broker/config';
import { type Principal } from '#broker/handshake';
import { scopesOf, scopeValues } from './scopes.js';

/** Who asks: the principal (null: anonymous) and, in protocols that have one, its client id (MQTT's). */
export interface TopicClient {
  readonly principal: Principal | null;
  readonly clientId: string | null;
}

/** A placeholder value that would change a filter's shape (a level, a wildcard): never substituted. */
const UNSAFE = /[/+#]/;

/**
 * The one authorization of the bus: every protocol module asks it before a principal publishes or
 * subscribes, and before a message reaches a subscriber whose filter a rule cuts through. In order:
 *
 * 1. Topics under `$SYS/` belong to the broker: nobody publishes there.
 * 2. Scopes: a principal with any `bus:` scope (or one of a name a module added for them,
 *    `addScopeAlias`) may publish only to topics its `bus:publish:<filter>` scopes match, and subscribe
 *    only with filters within its `bus:subscribe:<filter>` scopes. Without such scopes (or anonymous)
 *    it is not restricted by them.
 * 3. The config's rules (`authorization.rules`): the first rule that applies decides; none: `noMatch`.
 *
 * Scopes and rules must both allow. A subscription whose filter a rule decides whole (the filter lies
 * within a rule's filter, and no earlier rule cuts through it) is granted or refused whole; one that
 * rules cut through is granted when any of it may be read, and each message is then checked on its
 * topic (`mayRead`), as Mosquitto checks read access per message.
 */
export class TopicAuthorizer {
  private readonly rules: readonly TopicRuleConfig[];
  private readonly allowOnNoMatch: boolean;
  /** Scope families that restrict topics: `bus:` and the older names modules added. */
  private readonly families = ['bus:'];

  constructor(config: AuthorizationConfig) {
    config.rules.forEach((rule, i) =>
      rule.topics.forEach((topic, j) => {
        try {
          assertTopicFilter(topic.replaceAll('%c', 'c').replaceAll('%u', 'u'));
        } catch (err) {
          throw new Error(`authorization.rules[${i}].topics[${j}]: ${(err as Error).message}`);
        }
      }),
    );
    this.rules = config.rules;
    this.allowOnNoMatch = config.noMatch === 'allow';
  }

  /**
   * Reads `<name>:publish:<filter>` and `<name>:subscribe:<filter>` scopes as the `bus:` ones, in every
   * protocol: a module's older name for them, so that credentials issued with it stay restricted.
   * Called by the module at its construction, before any client connects.
   */
  addScopeAlias(name: string): void {
    const family = `${name}:`;
    if (!this.families.includes(family)) this.families.push(family);
  }

  /** What one client may do; compiled once per connection (or session), asked per request. */
  grantFor(client: TopicClient): TopicGrant {
    const scopes = scopesOf(client.principal);
    const scoped = scopes.some((scope) => this.families.some((family) => scope.startsWith(family)));
    const publish = scoped ? this.familyValues(scopes, 'publish') : null;
    const subscribe = scoped ? this.familyValues(scopes, 'subscribe') : null;
    if (this.rules.length === 0) return new TopicGrant(publish, subscribe, [], this.allowOnNoMatch);
    const user = client.principal?.subject;
    const applying: CompiledRule[] = [];
    for (const rule of this.rules) {
      if (rule.who === 'anonymous' && client.principal !== null) continue;
      if (rule.who === 'authenticated' && client.principal === null) continue;
      if (rule.user !== undefined && rule.user !== user) continue;
      if (rule.clientId !== undefined && rule.clientId !== client.clientId) continue;
      const compiled = compile(rule, client.clientId, user);
      if (compiled !== null) applying.push(compiled);
    }
    return new TopicGrant(publish, subscribe, applying, this.allowOnNoMatch);
  }

  private familyValues(scopes: readonly string[], action: 'publish' | 'subscribe'): readonly string[] {
    return this.families.flatMap((family) => scopeValues(scopes, `${family}${action}`));
  }
}

interface CompiledRule {
  readonly action: TopicRuleConfig['action'];
  /** null: the rule applies to every topic (a deny whose placeholder could not be filled safely). */
  readonly topics: readonly string[] | null;
  readonly allow: boolean;
}

/**
 * Fills in `%c` and `%u`. A filter needing a value the client lacks (no user, or a protocol without
 * client ids) is dropped; one whose value holds `/`, `+` or `#` would widen the filter, so it is
 * dropped from an allow rule and turns a deny rule into a deny of everything (failing closed). A rule
 * left without filters applies to nothing.
 */
function compile(
  rule: TopicRuleConfig,
  clientId: string | null,
  user: string | undefined,
): CompiledRule | null {
  const allow = rule.permission === 'allow';
  const topics: string[] = [];
  for (const topic of rule.topics) {
    const needsUser = topic.includes('%u');
    const needsClient = topic.includes('%c');
    if ((needsUser && user === undefined) || (needsClient && clientId === null)) continue;
    if ((needsUser && UNSAFE.test(user as string)) || (needsClient && UNSAFE.test(clientId as string))) {
      if (allow) continue;
      return { action: rule.action, topics: null, allow };
    }
    topics.push(topic.replaceAll('%c', clientId ?? '').replaceAll('%u', user ?? ''));
  }
  return topics.length === 0 ? null : { action: rule.action, topics, allow };
}

/** One client's rights on the bus (see TopicAuthorizer). */
export class TopicGrant {
  /** Everything but `$SYS/` publishing: no scopes, no rules. */
  static readonly unrestricted = new TopicGrant(null, null, [], true);

  /**
   * Whether a granted subscription may still carry messages this client may not read, so that each
   * message must be asked about (`mayRead`). False for nearly every client: then delivery asks nothing.
   */
  readonly checksReads: boolean;

  constructor(
    private readonly publish: readonly string[] | null,
    private readonly subscribe: readonly string[] | null,
    private readonly rules: readonly CompiledRule[],
    private readonly allowOnNoMatch: boolean,
  ) {
    this.checksReads = !allowOnNoMatch || rules.some((rule) => !rule.allow && rule.action !== 'publish');
  }

  mayPublish(topic: string): boolean {
    if (topic.startsWith('$SYS/')) return false;
    if (this.publish !== null && !this.publish.some((filter) => safeMatch(filter, topic))) return false;
    return this.decide('publish', topic);
  }

  /** Whether a subscription with `filter` is granted; what it then receives is still `mayRead`'s. */
  maySubscribe(filter: string): boolean {
    if (this.subscribe !== null && !this.subscribe.some((scope) => safeWithin(filter, scope))) return false;
    let someAllowed = false;
    for (const rule of this.rules) {
      if (rule.action === 'publish') continue;
      if (rule.topics === null) return rule.allow;
      // The rule covers the whole filter: it decides what is left of it.
      if (rule.topics.some((t) => filterWithin(filter, t))) return rule.allow || someAllowed;
      if (rule.allow && rule.topics.some((t) => filtersOverlap(filter, t))) someAllowed = true;
    }
    return this.allowOnNoMatch || someAllowed;
  }

  /** Whether a message on `topic` may reach this client through a granted subscription. */
  mayRead(topic: string): boolean {
    return this.decide('subscribe', topic);
  }

  private decide(action: 'publish' | 'subscribe', topic: string): boolean {
    for (const rule of this.rules) {
      if (rule.action !== 'all' && rule.action !== action) continue;
      if (rule.topics === null || rule.topics.some((t) => topicMatches(t, topic))) return rule.allow;
    }
    return this.allowOnNoMatch;
  }
}

/** A malformed scope in a token grants nothing rather than failing the connection. */
function safeMatch(filter: string, topic: string): boolean {
  return filter.length > 0 && topicMatches(filter, topic);
}

function safeWithin(filter: string, scope: string): boolean {
  return scope.length > 0 && filterWithin(filter, scope);
}
