import { type HandshakeRequest, type ParsedRequest } from './types.js';

const NONE: readonly string[] = [];

/** The scheme and authority of an absolute-form request target (`http://host:port`), to drop. */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/**
 * The path and query of a request target. A server must accept the absolute-form (RFC 9112 section
 * 3.2.2) even though clients send it only to proxies; its path is then what names the endpoint.
 */
function originForm(url: string): string {
  if (url.charCodeAt(0) === 0x2f) return url;
  const authority = ABSOLUTE_FORM.exec(url);
  if (authority === null) return url;
  const rest = url.slice(authority[0].length);
  return rest.charCodeAt(0) === 0x2f ? rest : `/${rest}`;
}

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
  const target = originForm(raw.url);
  const q = target.indexOf('?');
  return {
    raw,
    pathname: q === -1 ? target : target.slice(0, q),
    query: q === -1 ? '' : target.slice(q + 1),
    values: (name) => headers.get(name) ?? NONE,
  };
}
