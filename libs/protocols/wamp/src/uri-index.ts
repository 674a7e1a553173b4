import { type MatchPolicy, wildcardMatches } from './uri.js';

interface WildcardEntry<T> {
  readonly parts: readonly string[];
  readonly value: T;
}

/**
 * Values keyed by (match policy, URI), looked up by a concrete URI. Prefix lookups only try the lengths
 * some prefix has, so a publication costs one map lookup per distinct prefix length, not per character.
 */
export class UriIndex<T> {
  private readonly exact = new Map<string, T>();
  private readonly prefix = new Map<string, T>();
  /** Distinct prefix lengths, longest first, with how many prefixes have each. */
  private prefixLengths: number[] = [];
  private readonly prefixLengthCounts = new Map<number, number>();
  private readonly wildcard = new Map<string, WildcardEntry<T>>();

  get(match: MatchPolicy, uri: string): T | undefined {
    if (match === 'exact') return this.exact.get(uri);
    if (match === 'prefix') return this.prefix.get(uri);
    return this.wildcard.get(uri)?.value;
  }

  set(match: MatchPolicy, uri: string, value: T): void {
    if (match === 'exact') {
      this.exact.set(uri, value);
    } else if (match === 'prefix') {
      if (!this.prefix.has(uri)) this.countPrefixLength(uri.length, 1);
      this.prefix.set(uri, value);
    } else {
      this.wildcard.set(uri, { parts: uri.split('.'), value });
    }
  }

  delete(match: MatchPolicy, uri: string): void {
    if (match === 'exact') {
      this.exact.delete(uri);
    } else if (match === 'prefix') {
      if (this.prefix.delete(uri)) this.countPrefixLength(uri.length, -1);
    } else {
      this.wildcard.delete(uri);
    }
  }

  /**
   * Every value matching `uri`: exact, then prefixes longest first, then wildcards with the most
   * components before each wildcard first (pattern-based registration's precedence), ties in insertion order.
   */
  *matching(uri: string): Generator<T> {
    const exact = this.exact.get(uri);
    if (exact !== undefined) yield exact;
    for (const length of this.prefixLengths) {
      if (length > uri.length) continue;
      const value = this.prefix.get(uri.slice(0, length));
      if (value !== undefined) yield value;
    }
    if (this.wildcard.size === 0) return;
    const parts = uri.split('.');
    const matched: WildcardEntry<T>[] = [];
    for (const entry of this.wildcard.values()) if (wildcardMatches(entry.parts, parts)) matched.push(entry);
    if (matched.length > 1) matched.sort((a, b) => byWildcardPrecedence(a.parts, b.parts));
    for (const entry of matched) yield entry.value;
  }

  private countPrefixLength(length: number, delta: number): void {
    const count = (this.prefixLengthCounts.get(length) ?? 0) + delta;
    if (count > 0) this.prefixLengthCounts.set(length, count);
    else this.prefixLengthCounts.delete(length);
    this.prefixLengths = [...this.prefixLengthCounts.keys()].sort((a, b) => b - a);
  }
}

/**
 * Of two wildcard patterns matching one URI (so with as many components), the one whose first wildcard
 * comes later goes first, then by the next wildcard: `a1.b2..d4` before `a1...d4`.
 */
function byWildcardPrecedence(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const aWild = a[i] === '';
    if (aWild !== (b[i] === '')) return aWild ? 1 : -1;
  }
  return 0;
}
