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
 *
 * A string is skipped with indexOf to its closing quote, not a character at a time: a GraphQL
 * document of 26 KB is one string: 63 µs read character by character, 0.3 µs so.
 */
export function nestsDeeperThan(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i);
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
    }
  }
  return false;
}

/**
 * The index of the quote that closes the string opened at `open`, or the text's length if none does.
 * A quote after an odd number of backslashes is escaped (each pair is an escaped backslash); the
 * backslashes counted are the string's own, since its opening quote stops the count.
 */
function closingQuote(text: string, open: number): number {
  let from = open + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** The reason a protocol gives when nestsDeeperThan refused a message. */
export const TOO_DEEP = `the message is nested deeper than ${MAX_JSON_DEPTH} levels`;
