/**
 * Topic names and filters as in MQTT 3.1.1 section 4.7, which every protocol module maps its own addressing
 * onto: '/'-separated levels (empty levels allowed), '+' matches one level, '#' matches the rest and must be
 * the whole last level, and a filter starting with a wildcard does not match topics starting with '$'.
 */

/** MQTT strings carry a 16-bit length, so longer topics could not be bridged to MQTT clients. */
export const MAX_TOPIC_BYTES = 65535;

export class InvalidTopicError extends Error {
  override readonly name = 'InvalidTopicError';
}

const NUL = 0x00;
const HASH = 0x23;
const DOLLAR = 0x24;
const PLUS = 0x2b;
const SLASH = 0x2f;

/** Throws InvalidTopicError unless `topic` is valid to publish to. */
export function assertTopicName(topic: string): void {
  const problem = findProblem(topic, false);
  if (problem !== undefined) throw new InvalidTopicError(`Invalid topic name ${quote(topic)}: ${problem}`);
}

/** Throws InvalidTopicError unless `filter` is valid to subscribe with. */
export function assertTopicFilter(filter: string): void {
  const problem = findProblem(filter, true);
  if (problem !== undefined) throw new InvalidTopicError(`Invalid topic filter ${quote(filter)}: ${problem}`);
}

/**
 * Whether `filter` matches `topic`. Both must already be valid (the result is unspecified otherwise); useful
 * where a trie does not fit, e.g. matching a new subscription against stored retained topics.
 */
export function topicMatches(filter: string, topic: string): boolean {
  const filterLevels = filter.split('/');
  const topicLevels = topic.split('/');
  if (topic.charCodeAt(0) === DOLLAR && (filterLevels[0] === '+' || filterLevels[0] === '#')) return false;
  for (let i = 0; i < filterLevels.length; i++) {
    const level = filterLevels[i];
    // '#' also matches the parent level, so 'a/#' matches 'a'.
    if (level === '#') return true;
    if (i >= topicLevels.length) return false;
    if (level !== '+' && level !== topicLevels[i]) return false;
  }
  return filterLevels.length === topicLevels.length;
}

/**
 * Whether every topic `filter` matches is also matched by `outer` (both valid filters): a grant or a
 * rule on `outer` then covers the whole subscription.
 */
export function filterWithin(filter: string, outer: string): boolean {
  const f = filter.split('/');
  const s = outer.split('/');
  if (f[0]?.startsWith('$') === true && (s[0] === '+' || s[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    const allowed = s[i];
    if (allowed === '#') return true;
    if (allowed === undefined) return false;
    const level = f[i] as string;
    // A whole '#' has no parent level (a topic is never empty), so '+/#' covers it.
    if (level === '#') return i === 0 && allowed === '+' && s.length === 2 && s[1] === '#';
    if (allowed === '+') continue;
    if (level === '+' || level !== allowed) return false;
  }
  return f.length === s.length || (s.length === f.length + 1 && s[f.length] === '#');
}

/**
 * Whether some topic is matched by both filters (both valid): a rule on one may then decide about part
 * of what a subscription on the other receives.
 */
export function filtersOverlap(a: string, b: string): boolean {
  const x = a.split('/');
  const y = b.split('/');
  for (let i = 0; ; i++) {
    const p = x[i];
    const q = y[i];
    if (p === undefined || q === undefined) {
      // One ran out: the other matches the same topic only if all it has left is '#' (the parent level).
      const rest = (p === undefined ? y : x).length - i;
      return rest === 0 || (rest === 1 && (p ?? q) === '#');
    }
    // A leading wildcard never matches a '$'-topic.
    if (i === 0 && ((isWildcard(p) && q.startsWith('$')) || (isWildcard(q) && p.startsWith('$'))))
      return false;
    if (p === '#' || q === '#') return true;
    if (p !== '+' && q !== '+' && p !== q) return false;
  }
}

function isWildcard(level: string): boolean {
  return level === '+' || level === '#';
}

/** One pass over the UTF-16 code units: syntax, U+0000, lone surrogates and UTF-8 length together. */
function findProblem(text: string, isFilter: boolean): string | undefined {
  if (text.length === 0) return 'must not be empty';
  // Every code unit encodes to at least one UTF-8 byte, so this bounds the scan of hostile input.
  if (text.length > MAX_TOPIC_BYTES) return `longer than ${MAX_TOPIC_BYTES} UTF-8 bytes`;
  let bytes = 0;
  let levelStart = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) {
      bytes += 1;
      if (code === NUL) return `contains U+0000 at index ${i}`;
      if (code === SLASH) {
        levelStart = i + 1;
      } else if (code === PLUS || code === HASH) {
        const wildcard = code === PLUS ? '+' : '#';
        if (!isFilter)
          return `contains wildcard '${wildcard}' at index ${i}; wildcards are only valid in filters`;
        const next = i + 1 < text.length ? text.charCodeAt(i + 1) : SLASH;
        if (i !== levelStart || next !== SLASH) {
          return `wildcard '${wildcard}' at index ${i} must occupy a whole level`;
        }
        if (code === HASH && i + 1 !== text.length)
          return `wildcard '#' at index ${i} must be the last level`;
      }
    } else if (code < 0x800) {
      bytes += 2;
    } else if (code >= 0xd800 && code <= 0xdbff) {
      // A lone surrogate has no UTF-8 encoding, so the topic would change on its way to an MQTT client.
      const low = text.charCodeAt(i + 1);
      if (!(low >= 0xdc00 && low <= 0xdfff)) return `contains a lone surrogate at index ${i}`;
      bytes += 4;
      i++;
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      return `contains a lone surrogate at index ${i}`;
    } else {
      bytes += 3;
    }
  }
  if (bytes > MAX_TOPIC_BYTES) return `is ${bytes} UTF-8 bytes, more than ${MAX_TOPIC_BYTES}`;
  return undefined;
}

/** Topics can be 64 KiB and hold control characters, so error messages show a short, escaped prefix. */
function quote(text: string): string {
  return text.length > 64 ? `${JSON.stringify(text.slice(0, 64))}…` : JSON.stringify(text);
}
