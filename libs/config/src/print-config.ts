import { stringify } from 'yaml';
import { type BrokerConfig } from './config.schema.js';

/** The keys whose values are secrets wherever they sit (jwt, introspection, WAMP-CRA users, admin). */
const SECRET_KEYS = new Set(['secret', 'clientSecret', 'password', 'tokens']);
const REDACTED = '[REDACTED]';

/**
 * The effective configuration as YAML (what `npm start -- --print-config` shows): every default
 * filled in, secrets replaced by [REDACTED], and the password of a URL (a database's, a NATS server's)
 * too, so the output can be pasted into an issue.
 */
export function printableConfig(config: BrokerConfig): string {
  return stringify(redacted(config), { lineWidth: 0 });
}

function redacted(value: unknown, key = ''): unknown {
  if (SECRET_KEYS.has(key) && value !== undefined) {
    return Array.isArray(value) ? value.map(() => REDACTED) : REDACTED;
  }
  if (typeof value === 'string') return withoutPassword(value);
  if (Array.isArray(value)) return value.map((item) => redacted(item));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redacted(v, k)]));
  }
  return value;
}

/** A URL's userinfo (`user:password@`, or a token alone before `@`) without its secret; fails closed. */
function withoutPassword(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon === -1 ? `${scheme}${REDACTED}@` : `${scheme}${userinfo.slice(0, colon)}:${REDACTED}@`;
  });
}
