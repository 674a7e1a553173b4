const HASH = 0x23;
const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const OPEN_PAREN = 0x28;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const CLOSE_PAREN = 0x29;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of brackets (`{`, `[`, `(`) in a GraphQL document, outside strings, block strings
 * and comments, read in one pass without recursion. graphql-js parses values and selections
 * recursively: a list value nested 2,000 levels deep fits in 4 KB and well under `maxTokens`, and
 * overflowed the stack (close 4500). Counting first lets such a document be refused as a GraphQL error.
 * A document whose strings are not closed is left to the parser, which reports it.
 *
 * Comments and strings are skipped with indexOf, not a character at a time: a 26 KB comment (which the
 * token limit does not count) took 62 µs per document read character by character, 0.8 µs so.
 */
export function nestingDepth(document: string): number {
  const ahead = new Ahead(document);
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < document.length) {
    const c = document.charCodeAt(i);
    if (c === HASH) {
      // The comment ends before its line break; the break itself is no bracket, so it is skipped too.
      i = Math.min(ahead.lf.from(i), ahead.cr.from(i)) + 1;
      continue;
    }
    if (c === QUOTE) {
      i = document.startsWith('"""', i) ? afterBlockString(document, i + 3) : afterString(ahead, i + 1);
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET || c === OPEN_PAREN) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET || c === CLOSE_PAREN) {
      depth = Math.max(0, depth - 1);
    }
    i++;
  }
  return deepest;
}

/**
 * The index after a string's closing quote or the line break that ends it unclosed (a backslash
 * escapes the character after it, whatever it is), or the end of the document.
 */
function afterString(ahead: Ahead, from: number): number {
  let i = from;
  for (;;) {
    const end = Math.min(ahead.quote.from(i), ahead.lf.from(i));
    const escape = ahead.backslash.from(i);
    if (escape < end) {
      i = escape + 2;
      continue;
    }
    return Math.min(end + 1, ahead.text.length);
  }
}

/** The index after a block string's closing `"""` (an escaped `\"""` does not close it), or the end. */
function afterBlockString(document: string, from: number): number {
  let i = from;
  for (;;) {
    const at = document.indexOf('"""', i);
    if (at === -1) return document.length;
    // A `\"""` starting at or after `from` is an escaped quote triple: the search goes on after it.
    if (at > i && document.charCodeAt(at - 1) === BACKSLASH) i = at + 3;
    else return at + 3;
  }
}

/**
 * The next index of one character at or after a position that only moves forward, remembered while it
 * is still ahead: a line of many short strings, or many comment lines without a `\r`, would otherwise
 * search the same text again for each.
 */
class NextIndex {
  private at = -1;

  constructor(
    private readonly text: string,
    private readonly char: string,
  ) {}

  /** The first index of the character at or after `from` (never less than the last `from`), or the text's length. */
  from(from: number): number {
    if (this.at < from) {
      const at = this.text.indexOf(this.char, from);
      this.at = at === -1 ? this.text.length : at;
    }
    return this.at;
  }
}

/** The characters the skips look for, in one document. */
class Ahead {
  readonly lf: NextIndex;
  readonly cr: NextIndex;
  readonly quote: NextIndex;
  readonly backslash: NextIndex;

  constructor(readonly text: string) {
    this.lf = new NextIndex(text, '\n');
    this.cr = new NextIndex(text, '\r');
    this.quote = new NextIndex(text, '"');
    this.backslash = new NextIndex(text, '\\');
  }
}
