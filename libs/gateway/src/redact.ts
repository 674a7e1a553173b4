/**
 * Tokens never reach a log line: these strip them from what the gateway logs about a request.
 * Every query value is replaced, not just the configured token parameter, since a deployment may
 * carry secrets under names we do not know.
 */
export const REDACTED = '[REDACTED]';

export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const names = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? pair : `${pair.slice(0, eq)}=${REDACTED}`;
    });
  return `${url.slice(0, q)}?${names.join('&')}`;
}

/** Subprotocol items that carry a credential keep their prefix only. */
export function redactSubprotocols(
  values: readonly string[],
  prefixes: readonly string[],
): string | undefined {
  if (values.length === 0) return undefined;
  return values
    .join(',')
    .split(',')
    .map((item) => {
      const trimmed = item.trim();
      const prefix = prefixes.find((p) => trimmed.startsWith(p));
      return prefix === undefined ? trimmed : `${prefix}${REDACTED}`;
    })
    .join(', ');
}
