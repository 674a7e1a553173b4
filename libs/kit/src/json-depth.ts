/** Nesting deeper than this is refused before JSON.parse: no protocol here needs more. */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Whether a JSON text nests arrays and objects deeper than `limit`, found in one pass over its
 * characters (strings skipped) before any parse: a small message nested thousands deep would
 * otherwise overflow the stack of whatever walks it (a validator, a pong echoing a ping).
 * Says nothing of validity: JSON.parse still decides that.
 */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/** The reason a protocol gives when nestsDeeperThan refused a message. */
export const TOO_DEEP = `the message is nested deeper than ${MAX_JSON_DEPTH} levels`;
