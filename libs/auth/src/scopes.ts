import { type Principal } from '#broker/handshake';

/**
 * A principal's scopes, wherever its credential carried them: a JWT's `scope` claim (space-separated,
 * RFC 8693) or `scopes` array, or a stored API token's scopes (the store puts them in `claims.scopes`).
 * Scope grammar used across the broker:
 *   `admin`                         the admin API
 *   `endpoint:<path>`               may open that endpoint path (none of these: any endpoint)
 *   `bus:publish:<filter>`          may publish to bus topics the filter matches, in any protocol
 *   `bus:subscribe:<filter>`        may subscribe to bus topics within that filter, in any protocol
 *   `<alias>:publish:` `<alias>:subscribe:`  older names of the two above that a module adds
 *                                   (TopicAuthorizer.addScopeAlias)
 *   `<module>:...`                  a module's own scopes (the role a stored credential's session gets)
 * A principal without any scope of a family is not restricted by that family.
 */
export function scopesOf(principal: Principal | null): readonly string[] {
  if (principal === null) return [];
  const { scope, scopes } = principal.claims;
  const found: string[] = [];
  if (typeof scope === 'string') found.push(...scope.split(' ').filter((s) => s.length > 0));
  if (Array.isArray(scopes)) for (const s of scopes) if (typeof s === 'string') found.push(s);
  return found;
}

/** The values of every `<family>:<value>` scope (for example family `bus:publish` gives the filters). */
export function scopeValues(scopes: readonly string[], family: string): readonly string[] {
  const prefix = `${family}:`;
  return scopes.filter((s) => s.startsWith(prefix)).map((s) => s.slice(prefix.length));
}

/** `endpoint:<path>` scopes restrict a credential to those endpoint paths (as configured, e.g. '/devices/:id'). */
export function opensEndpoint(principal: Principal, path: string): boolean {
  const allowed = scopeValues(scopesOf(principal), 'endpoint');
  return allowed.length === 0 || allowed.includes(path);
}
