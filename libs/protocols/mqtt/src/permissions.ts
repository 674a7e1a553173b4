import { scopesOf, scopeValues } from '#broker/auth';
import { type Principal } from '#broker/handshake';
import { topicMatches } from '#broker/bus';
import { type ClientAcl } from './acl.js';
import { filterWithin } from './topic-filter.js';

/**
 * What a client may do: its principal's `mqtt:publish:<filter>` and `mqtt:subscribe:<filter>` scopes
 * and the config's topic rules (acl.ts) must both allow it. A principal with no `mqtt:` scope at all
 * (or no principal) is unrestricted by scopes; one with any `mqtt:` scope may do only what its scopes
 * grant, so a token scoped to subscribing cannot publish.
 */
export class Permissions {
  static readonly unrestricted = new Permissions(null, null, null);

  private constructor(
    private readonly publish: readonly string[] | null,
    private readonly subscribe: readonly string[] | null,
    private readonly rules: ClientAcl | null,
  ) {}

  static of(principal: Principal | null, rules: ClientAcl | null = null): Permissions {
    const scopes = scopesOf(principal);
    if (!scopes.some((scope) => scope.startsWith('mqtt:'))) {
      return rules === null ? Permissions.unrestricted : new Permissions(null, null, rules);
    }
    return new Permissions(scopeValues(scopes, 'mqtt:publish'), scopeValues(scopes, 'mqtt:subscribe'), rules);
  }

  canPublish(topic: string): boolean {
    if (topic.startsWith('$SYS/')) return false;
    if (this.publish !== null && !this.publish.some((filter) => safeMatch(filter, topic))) return false;
    return this.rules === null || this.rules.allows('publish', topic);
  }

  canSubscribe(filter: string): boolean {
    if (this.subscribe !== null && !this.subscribe.some((scope) => safeWithin(filter, scope))) return false;
    return this.rules === null || this.rules.allows('subscribe', filter);
  }
}

/** A malformed scope in a token grants nothing rather than failing the connection. */
function safeMatch(filter: string, topic: string): boolean {
  return filter.length > 0 && topicMatches(filter, topic);
}

function safeWithin(filter: string, scope: string): boolean {
  return scope.length > 0 && filterWithin(filter, scope);
}
