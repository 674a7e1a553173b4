import { type HandshakeRequest, type ParsedRequest } from './types.js';

const NONE: readonly string[] = [];

/** Groups rawHeaders by lower-case name once, so every check after reads a map. */
export function parseRequest(raw: HandshakeRequest): ParsedRequest {
  const headers = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = (raw.rawHeaders[i] as string).toLowerCase();
    const value = raw.rawHeaders[i + 1] as string;
    const list = headers.get(name);
    if (list) list.push(value);
    else headers.set(name, [value]);
  }
  const q = raw.url.indexOf('?');
  return {
    raw,
    pathname: q === -1 ? raw.url : raw.url.slice(0, q),
    query: q === -1 ? '' : raw.url.slice(q + 1),
    values: (name) => headers.get(name) ?? NONE,
  };
}
