import { type MatchPolicy, wildcardMatches } from './uri.js';

export type Action = 'call' | 'register' | 'publish' | 'subscribe';

export interface PermissionRule {
  readonly uri: string;
  readonly match: MatchPolicy;
  readonly allow: readonly Action[];
}

interface CompiledRule {
  readonly uri: string;
  readonly match: MatchPolicy;
  readonly parts: readonly string[];
  readonly allow: ReadonlySet<Action>;
}

/** Answers are cached per URI; the cache is dropped when full so a client cycling URIs cannot grow it. */
const CACHE_LIMIT = 10_000;

/**
 * A role's permissions: an ordered list of URI rules; the first rule whose URI matches decides, and a URI
 * no rule matches is denied. A prefix rule with URI '' matches everything.
 */
export class Permissions {
  private readonly rules: readonly CompiledRule[];
  private readonly cache = new Map<string, boolean>();
  /** True when the first rule allows every action on every URI: the common open role skips the lookups. */
  readonly allowsEverything: boolean;

  constructor(rules: readonly PermissionRule[]) {
    this.rules = rules.map((r) => ({
      uri: r.uri,
      match: r.match,
      parts: r.uri.split('.'),
      allow: new Set(r.allow),
    }));
    const first = this.rules[0];
    this.allowsEverything =
      first !== undefined && first.match === 'prefix' && first.uri === '' && first.allow.size === 4;
  }

  allows(action: Action, uri: string): boolean {
    if (this.allowsEverything) return true;
    const key = `${action} ${uri}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const answer = this.decide(action, uri);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(key, answer);
    return answer;
  }

  private decide(action: Action, uri: string): boolean {
    let parts: string[] | null = null;
    for (const rule of this.rules) {
      let matches: boolean;
      if (rule.match === 'exact') matches = rule.uri === uri;
      else if (rule.match === 'prefix') matches = uri.startsWith(rule.uri);
      else matches = wildcardMatches(rule.parts, (parts ??= uri.split('.')));
      if (matches) return rule.allow.has(action);
    }
    return false;
  }
}
