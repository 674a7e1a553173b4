import { scopesOf, scopeValues } from '#broker/auth';
import { type Principal } from '#broker/handshake';
import { topicMatches } from '#broker/bus';
import { filterWithin } from './topic-filter.js';

/**
 * What a principal may do, from its `mqtt:publish:<filter>` and `mqtt:subscribe:<filter>` scopes.
 * A principal with no `mqtt:` scope at all (or no principal) is unrestricted; one with any `mqtt:`
 * scope may do only what its scopes grant, so a token scoped to subscribing cannot publish.
 */
export class Permissions {
  static readonly unrestricted = new Permissions(null, null);

  private constructor(
    private readonly publish: readonly string[] | null,
    private readonly subscribe: readonly string[] | null,
  ) {}

  static of(principal: Principal | null): Permissions {
    const scopes = scopesOf(principal);
    if (!scopes.some((scope) => scope.startsWith('mqtt:'))) return Permissions.unrestricted;
    return new Permissions(scopeValues(scopes, 'mqtt:publish'), scopeValues(scopes, 'mqtt:subscribe'));
  }

  canPublish(topic: string): boolean {
    if (topic.startsWith('$SYS/')) return false;
    return this.publish === null || this.publish.some((filter) => safeMatch(filter, topic));
  }

  canSubscribe(filter: string): boolean {
    return this.subscribe === null || this.subscribe.some((scope) => safeWithin(filter, scope));
  }
}

/** A malformed scope in a token grants nothing rather than failing the connection. */
function safeMatch(filter: string, topic: string): boolean {
  return filter.length > 0 && topicMatches(filter, topic);
}

function safeWithin(filter: string, scope: string): boolean {
  return scope.length > 0 && filterWithin(filter, scope);
}
