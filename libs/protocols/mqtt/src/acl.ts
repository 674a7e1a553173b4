import { assertTopicFilter } from '#broker/bus';
import { type Principal } from '#broker/handshake';
import { filterWithin } from './topic-filter.js';

export type AclAction = 'publish' | 'subscribe';

/** One rule of `mqtt.acl.rules`, as the config gives it. */
export interface AclRuleConfig {
  /** Which clients: all, those without a credential, or those with one. */
  readonly who: 'all' | 'anonymous' | 'authenticated';
  /** Only this principal (its subject: a username, a token's `sub`). */
  readonly user?: string | undefined;
  /** Only this client id. */
  readonly clientId?: string | undefined;
  readonly action: AclAction | 'all';
  /** Topic filters; `%c` stands for the client id and `%u` for the principal's subject. */
  readonly topics: readonly string[];
  readonly permission: 'allow' | 'deny';
}

/** A placeholder value that would change a filter's shape (a level, a wildcard): never substituted. */
const UNSAFE = /[/+#]/;

/**
 * Topic rules in the configuration, next to a token's `mqtt:` scopes, for what scopes cannot say:
 * rules for anonymous clients, per user or client id, and patterns naming the client's own tree, in
 * the manner of Mosquitto's ACL file and EMQX's authorization rules. Rules are read in order and the
 * first that applies decides; when none does, `noMatch`. A publish applies to a rule when its topic
 * matches one of the rule's filters; a subscribe when the requested filter lies within one of them
 * (as EMQX reads it): a deny on `a/b` refuses subscribing to `a/b`, not to `a/#`.
 */
export class Acl {
  constructor(
    private readonly rules: readonly AclRuleConfig[],
    private readonly noMatch: 'allow' | 'deny',
  ) {
    rules.forEach((rule, i) =>
      rule.topics.forEach((topic, j) => {
        try {
          assertTopicFilter(topic.replaceAll('%c', 'c').replaceAll('%u', 'u'));
        } catch (err) {
          throw new Error(`mqtt.acl.rules[${i}].topics[${j}]: ${(err as Error).message}`);
        }
      }),
    );
  }

  /** The rules as they apply to one client; null when there are none (unrestricted). */
  forClient(clientId: string, principal: Principal | null): ClientAcl | null {
    if (this.rules.length === 0) return null;
    const user = principal?.subject;
    const applying: CompiledRule[] = [];
    for (const rule of this.rules) {
      if (rule.who === 'anonymous' && principal !== null) continue;
      if (rule.who === 'authenticated' && principal === null) continue;
      if (rule.user !== undefined && rule.user !== user) continue;
      if (rule.clientId !== undefined && rule.clientId !== clientId) continue;
      const compiled = compile(rule, clientId, user);
      if (compiled !== null) applying.push(compiled);
    }
    return new ClientAcl(applying, this.noMatch === 'allow');
  }
}

interface CompiledRule {
  readonly action: AclAction | 'all';
  /** null: the rule applies to every topic (a deny whose placeholder could not be filled safely). */
  readonly topics: readonly string[] | null;
  readonly allow: boolean;
}

/**
 * Fills in `%c` and `%u`. A filter needing a value the client lacks (no user) is dropped; one whose
 * value holds `/`, `+` or `#` would widen the filter, so it is dropped from an allow rule and turns a
 * deny rule into a deny of everything (failing closed). A rule left without filters applies to nothing.
 */
function compile(rule: AclRuleConfig, clientId: string, user: string | undefined): CompiledRule | null {
  const allow = rule.permission === 'allow';
  const topics: string[] = [];
  for (const topic of rule.topics) {
    const needsUser = topic.includes('%u');
    const needsClient = topic.includes('%c');
    if (needsUser && user === undefined) continue;
    if ((needsUser && UNSAFE.test(user as string)) || (needsClient && UNSAFE.test(clientId))) {
      if (allow) continue;
      return { action: rule.action, topics: null, allow };
    }
    topics.push(topic.replaceAll('%c', clientId).replaceAll('%u', user ?? ''));
  }
  return topics.length === 0 ? null : { action: rule.action, topics, allow };
}

/** One client's applying rules. */
export class ClientAcl {
  constructor(
    private readonly rules: readonly CompiledRule[],
    private readonly allowOnNoMatch: boolean,
  ) {}

  /** Whether the client may publish to `topic`, or subscribe with `filter`. */
  allows(action: AclAction, topicOrFilter: string): boolean {
    for (const rule of this.rules) {
      if (rule.action !== 'all' && rule.action !== action) continue;
      // For a topic name (a publish) "within" is "matched by"; for a subscription's filter it is
      // "every topic it matches, the rule's filter matches too".
      if (rule.topics === null || rule.topics.some((t) => filterWithin(topicOrFilter, t))) return rule.allow;
    }
    return this.allowOnNoMatch;
  }
}
