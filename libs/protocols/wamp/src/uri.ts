/**
 * URI rules of the WAMP basic profile (section "URIs"), plus the pattern forms of the advanced profile.
 * Loose URIs allow any non-empty component without whitespace, '.' or '#'; strict ones only [0-9a-z_].
 * Patterns: `prefix` is a plain URI (optionally ending with '.') matched as a string prefix, `wildcard` allows empty components, each
 * matching any one component.
 */

export type MatchPolicy = 'exact' | 'prefix' | 'wildcard';
export type UriRule = 'loose' | 'strict';

/** Longer URIs are refused: they are keys in the router's maps and travel in every EVENT. */
export const MAX_URI_LENGTH = 1024;

const LOOSE = /^([^\s.#]+\.)*[^\s.#]+$/;
const STRICT = /^([0-9a-z_]+\.)*[0-9a-z_]+$/;
const LOOSE_EMPTY = /^(([^\s.#]+\.)|\.)*([^\s.#]+)?$/;
const STRICT_EMPTY = /^(([0-9a-z_]+\.)|\.)*([0-9a-z_]+)?$/;
const LOOSE_COMPONENT = /^[^\s.#]+$/;
const STRICT_COMPONENT = /^[0-9a-z_]+$/;

export function isValidUri(uri: unknown, rule: UriRule, match: MatchPolicy = 'exact'): uri is string {
  if (typeof uri !== 'string' || uri.length === 0 || uri.length > MAX_URI_LENGTH) return false;
  if (match === 'wildcard') return (rule === 'strict' ? STRICT_EMPTY : LOOSE_EMPTY).test(uri);
  // A prefix may end with a dot ('com.app.') so that it matches whole components only.
  const text = match === 'prefix' && uri.endsWith('.') ? uri.slice(0, -1) : uri;
  return (rule === 'strict' ? STRICT : LOOSE).test(text);
}

/** Whether one URI component (a bus topic level, say) is valid under the rule. */
export function isValidComponent(component: string, rule: UriRule): boolean {
  return (rule === 'strict' ? STRICT_COMPONENT : LOOSE_COMPONENT).test(component);
}

/** `wamp.` URIs belong to the router: clients may not register or publish under them. */
export function isReserved(uri: string): boolean {
  return uri.startsWith('wamp.');
}

/** Whether a wildcard pattern ('a..c') matches a concrete URI ('a.b.c'): same component count, empty matches any. */
export function wildcardMatches(pattern: readonly string[], uri: readonly string[]): boolean {
  if (pattern.length !== uri.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i];
    if (part !== '' && part !== uri[i]) return false;
  }
  return true;
}

export function parseMatch(value: unknown): MatchPolicy | null {
  if (value === undefined) return 'exact';
  return value === 'exact' || value === 'prefix' || value === 'wildcard' ? value : null;
}
