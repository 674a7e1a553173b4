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
