/**
 * Tokens never reach a log line: these strip them from what the gateway logs about a request.
 * Every query value is replaced, and a bare query item (no "=") too, since a deployment may carry
 * secrets under names we do not know, or with no name at all.
 */
export const REDACTED = '[REDACTED]';

/** Names longer than this are not names: treated as possible secrets. */
const MAX_NAME_LENGTH = 64;
const NAME = /^[A-Za-z0-9._~-]+$/;
/** One subprotocol item with nothing to trim or split. */
const PLAIN_ITEM = /^[^\s,]+$/;

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  // One pass over the query, appending as it goes: this runs for every handshake's log line.
  let redacted = url.slice(0, q + 1);
  for (let start = q + 1; start <= url.length;) {
    const amp = url.indexOf('&', start);
    const end = amp === -1 ? url.length : amp;
    if (start > q + 1) redacted += '&';
    redacted += redactQueryItem(url.slice(start, end));
    start = end + 1;
  }
  return redacted;
}

function redactQueryItem(item: string): string {
  if (item === '') return item;
  const eq = item.indexOf('=');
  const name = eq === -1 ? item : item.slice(0, eq);
  if (name.length > MAX_NAME_LENGTH || !NAME.test(name)) return REDACTED;
  return eq === -1 ? name : `${name}=${REDACTED}`;
}

/**
 * Subprotocol items that carry a credential keep their prefix only (matched case-insensitively, so
 * a mistyped "Bearer." is caught too); anything that does not look like a protocol name (too long,
 * spaces) is redacted whole, since a malformed offer can still hold a token.
 */
export function redactSubprotocols(
  values: readonly string[],
  prefixes: readonly string[],
): string | undefined {
  if (values.length === 0) return undefined;
  // Most clients offer one plain name (chat.v1, mqtt): kept as it is, without splitting and joining.
  const only = values.length === 1 ? (values[0] as string) : '';
  if (only.length <= MAX_NAME_LENGTH && PLAIN_ITEM.test(only)) {
    const lower = only.toLowerCase();
    if (!prefixes.some((p) => lower.includes(p.toLowerCase()))) return only;
  }
  const lowered = prefixes.map((p) => p.toLowerCase());
  return values
    .join(',')
    .split(',')
    .map((item) => {
      const trimmed = item.trim();
      const lower = trimmed.toLowerCase();
      const prefix = lowered.find((p) => lower.includes(p));
      if (prefix !== undefined)
        return `${trimmed.slice(0, lower.indexOf(prefix) + prefix.length)}${REDACTED}`;
      return trimmed.length > MAX_NAME_LENGTH || /\s/.test(trimmed) ? REDACTED : trimmed;
    })
    .join(', ');
}
