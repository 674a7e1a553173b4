import { isToken, splitHeaderList } from './header-tokens.js';

const NONE: readonly string[] = Object.freeze([]);

// Below this size a quadratic scan beats allocating a Set; above it, the Set
// keeps a header stuffed with thousands of names from costing O(n²).
const LINEAR_DUPLICATE_SCAN_MAX = 16;

function hasDuplicate(items: readonly string[]): boolean {
  if (items.length <= LINEAR_DUPLICATE_SCAN_MAX) {
    for (let i = 1; i < items.length; i++) {
      if (items.indexOf(items[i] as string) < i) return true;
    }
    return false;
  }
  return new Set(items).size !== items.length;
}

/**
 * The client's offered subprotocols, in order; `[]` when the header is absent.
 * null when malformed: an empty element, a non-token element, or a duplicate
 * (ws's own parser rejects the same inputs). Names are case-sensitive
 * (RFC 6455 §11.5), so `chat` and `Chat` are distinct, not duplicates.
 */
export function parseSubprotocols(values: readonly string[]): readonly string[] | null {
  if (values.length === 0) return NONE;
  const items = splitHeaderList(values);
  if (items === null) return null;
  for (const item of items) {
    if (!isToken(item)) return null;
  }
  return hasDuplicate(items) ? null : items;
}
