import { type Args, type Kwargs } from './messages.js';
import { isReserved, isValidComponent, type MatchPolicy, MAX_URI_LENGTH, type UriRule } from './uri.js';

/**
 * WAMP topics and bus topics map level for level: `a.b.c` <-> `a/b/c`.
 *
 * - WAMP to bus: every published topic, unless a component holds a character that means something else
 *   on the bus ('/', '+', '#' or U+0000); those publications stay inside WAMP.
 * - Bus to WAMP: only topics whose every level is a valid URI component of the realm (non-empty, no
 *   whitespace, no '.' or '#'; strict realms: [0-9a-z_] only). `a//b`, `/a`, `a.b/c` or `sensor 1/x` are
 *   not delivered to WAMP subscribers. Topics under `wamp/` are skipped: `wamp.` is the router's namespace.
 */
export function busTopicOf(uri: string): string | null {
  if (isReserved(uri) || /[/+#]/.test(uri) || uri.includes('\u0000')) return null;
  return uri.replaceAll('.', '/');
}

/**
 * The bus filter covering what a subscription of this realm may receive from the bus: exact `a.b` is
 * `a/b`, wildcard `a..c` is `a/+/c`, and prefix `a.b` (a prefix of the URI's text, so `a.bc` too) is
 * `a/#`. Null for URIs the bus cannot carry (then nothing comes from the bus for them anyway).
 */
export function busFilterOf(match: MatchPolicy, uri: string): string | null {
  if (/[/+#]/.test(uri) || uri.includes('\u0000')) return null;
  const levels = uri.split('.');
  if (match === 'exact') return levels.join('/');
  if (match === 'wildcard') return levels.map((level) => (level === '' ? '+' : level)).join('/');
  return [...levels.slice(0, -1), '#'].join('/');
}

export function wampTopicOf(topic: string, rule: UriRule): string | null {
  if (topic.length > MAX_URI_LENGTH) return null;
  const levels = topic.split('/');
  if (levels[0] === 'wamp') return null;
  for (const level of levels) if (!isValidComponent(level, rule)) return null;
  return levels.join('.');
}

export interface BusPayload {
  readonly payload: Uint8Array;
  readonly contentType: string;
}

/**
 * A publication's bus payload: nothing for no arguments; one binary argument as its bytes; one string
 * argument as UTF-8 text; one other argument as its JSON; anything else as the JSON object
 * `{"args": [...], "kwargs": {...}}`.
 */
export function busPayloadOf(args: Args, kwargs: Kwargs): BusPayload {
  const hasKwargs = kwargs !== undefined && Object.keys(kwargs).length > 0;
  const count = args?.length ?? 0;
  if (!hasKwargs && count === 0)
    return { payload: new Uint8Array(0), contentType: 'application/octet-stream' };
  if (!hasKwargs && count === 1) {
    const only = args?.[0];
    // WAMP's JSON form of binary ('\0' + base64) goes to the bus as the bytes it stands for.
    if (typeof only === 'string' && only.startsWith('\u0000')) {
      return { payload: Buffer.from(only.slice(1), 'base64'), contentType: 'application/octet-stream' };
    }
    if (typeof only === 'string') {
      return { payload: Buffer.from(only, 'utf8'), contentType: 'text/plain; charset=utf-8' };
    }
    return { payload: Buffer.from(JSON.stringify(only), 'utf8'), contentType: 'application/json' };
  }
  return {
    payload: Buffer.from(JSON.stringify({ args: args ?? [], kwargs: kwargs ?? {} }), 'utf8'),
    contentType: 'application/json',
  };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A bus message's EVENT arguments: JSON content types are parsed into the one argument; other valid
 * UTF-8 becomes a string argument; other bytes a WAMP JSON binary string ('\0' + base64).
 */
export function wampArgsOf(payload: Uint8Array, contentType: string | undefined): unknown[] {
  if (payload.byteLength === 0) return [];
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    return [`\u0000${Buffer.from(payload).toString('base64')}`];
  }
  if (contentType !== undefined && /^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    try {
      return [JSON.parse(text)];
    } catch {
      return [text];
    }
  }
  return [text];
}
