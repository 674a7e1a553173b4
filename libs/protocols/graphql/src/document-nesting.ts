/**
 * The deepest nesting of brackets (`{`, `[`, `(`) in a GraphQL document, outside strings, block strings
 * and comments, read in one pass without recursion. graphql-js parses values and selections
 * recursively: a list value nested 2,000 levels deep fits in 4 KB and well under `maxTokens`, and
 * overflowed the stack (close 4500). Counting first lets such a document be refused as a GraphQL error.
 * A document whose strings are not closed is left to the parser, which reports it.
 */
export function nestingDepth(document: string): number {
  let depth = 0;
  let deepest = 0;
  let i = 0;
  while (i < document.length) {
    const c = document[i];
    if (c === '#') {
      while (i < document.length && document[i] !== '\n' && document[i] !== '\r') i++;
    } else if (c === '"') {
      i = document.startsWith('"""', i) ? afterBlockString(document, i + 3) : afterString(document, i + 1);
      continue;
    } else if (c === '{' || c === '[' || c === '(') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === '}' || c === ']' || c === ')') {
      depth = Math.max(0, depth - 1);
    }
    i++;
  }
  return deepest;
}

/** The index after a string's closing quote (escapes skipped), or the end of the document. */
function afterString(document: string, from: number): number {
  for (let i = from; i < document.length; i++) {
    if (document[i] === '\\') i++;
    else if (document[i] === '"' || document[i] === '\n') return i + 1;
  }
  return document.length;
}

/** The index after a block string's closing `"""` (an escaped `\"""` does not close it). */
function afterBlockString(document: string, from: number): number {
  for (let i = from; i < document.length; i++) {
    if (document.startsWith('\\"""', i)) i += 3;
    else if (document.startsWith('"""', i)) return i + 3;
  }
  return document.length;
}
