import { assertTopicFilter, InvalidTopicError } from '#broker/bus';

/** A SUBSCRIBE filter split into its share group (`$share/<group>/<filter>`, v5 4.8.2) and topic filter. */
export interface ParsedFilter {
  readonly group: string | null;
  readonly filter: string;
}

const SHARE_PREFIX = '$share/';

/** Throws InvalidTopicError when the filter (or its share group) is not valid. */
export function parseFilter(raw: string): ParsedFilter {
  if (!raw.startsWith(SHARE_PREFIX)) {
    assertTopicFilter(raw);
    return { group: null, filter: raw };
  }
  const rest = raw.slice(SHARE_PREFIX.length);
  const slash = rest.indexOf('/');
  const group = slash < 0 ? rest : rest.slice(0, slash);
  if (slash < 0 || group.length === 0 || /[+#]/.test(group)) {
    throw new InvalidTopicError(
      `Invalid shared subscription ${JSON.stringify(raw)}: needs $share/<group>/<filter>`,
    );
  }
  const filter = rest.slice(slash + 1);
  assertTopicFilter(filter);
  return { group, filter };
}

/**
 * Whether every topic `filter` matches is also matched by `scope` (both valid filters), so a
 * `mqtt:subscribe:<scope>` permission covers the subscription.
 */
export function filterWithin(filter: string, scope: string): boolean {
  const f = filter.split('/');
  const s = scope.split('/');
  if (f[0]?.startsWith('$') === true && (s[0] === '+' || s[0] === '#')) return false;
  for (let i = 0; i < f.length; i++) {
    const allowed = s[i];
    if (allowed === '#') return true;
    if (allowed === undefined) return false;
    const level = f[i] as string;
    if (level === '#') return false;
    if (allowed === '+') continue;
    if (level === '+' || level !== allowed) return false;
  }
  return f.length === s.length || (s.length === f.length + 1 && s[f.length] === '#');
}
