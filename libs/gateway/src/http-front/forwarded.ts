import { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import parseForwarded from 'forwarded-parse';
import proxyaddr from 'proxy-addr';

/** Who the client is, as the broker may believe it. */
export interface ClientOrigin {
  /** The client's address: the peer's, or the nearest untrusted hop a trusted proxy reported. */
  readonly address: string;
  /** TLS reached the broker or, as a trusted proxy reported, the proxy (https/wss). */
  readonly secure: boolean;
  /** The Host the client addressed, as a trusted proxy reported it; undefined: the request's own. */
  readonly host: string | undefined;
}

/** Hops read from a Forwarded or X-Forwarded-For chain, from the right; the rest are not looked at. */
const MAX_HOPS = 32;
/** A forwarding header longer than this is not believed (the peer's own address is used). */
const MAX_HEADER_CHARS = 4096;

/**
 * Client address, scheme and host from RFC 7239 `Forwarded` or `X-Forwarded-For/-Proto/-Host`,
 * believed only when the peer is a trusted proxy (express's `trust proxy` rules, through
 * proxy-addr): the client is the rightmost hop that is not itself trusted. From anyone else the
 * headers are ignored, so a spoofed header never changes a limit or an origin decision; a header
 * a trusted proxy garbled is ignored too.
 */
export class ForwardedHeaders {
  private readonly trust: ((address: string, hop: number) => boolean) | null;

  constructor(trustedProxies: readonly string[]) {
    this.trust = trustedProxies.length === 0 ? null : proxyaddr.compile([...trustedProxies]);
  }

  resolve(req: IncomingMessage): ClientOrigin {
    return this.resolveFor(req.socket, req.headers);
  }

  /**
   * The same for a peer and headers met elsewhere (an HTTP/2 stream's connection and headers).
   * `encrypted` is what a TLS socket says of itself (the HTTP/2 bridge's sockets say it too).
   */
  resolveFor(
    socket: { readonly remoteAddress?: string | undefined; readonly encrypted?: boolean },
    headers: IncomingHttpHeaders,
  ): ClientOrigin {
    const peer = socket.remoteAddress ?? '';
    const secure = socket.encrypted === true;
    const own: ClientOrigin = { address: peer, secure, host: undefined };
    if (this.trust === null || !this.trust(peer, 0)) return own;
    const forwarded = single(headers['forwarded']);
    if (forwarded !== undefined) return this.fromForwarded(forwarded, secure) ?? own;
    const chain = single(headers['x-forwarded-for']);
    let address: string | null = peer;
    if (chain !== undefined) {
      if (chain.length > MAX_HEADER_CHARS) return own;
      address = this.client(
        chain
          .split(',')
          .map((hop) => hop.trim())
          .slice(-MAX_HOPS),
      ).address;
      if (address === null) return own;
    }
    // Express's reading: the proxy nearest the client put its scheme and host first.
    const proto = first(headers['x-forwarded-proto']);
    const host = first(headers['x-forwarded-host']);
    return { address, secure: proto === undefined ? secure : isSecure(proto), host };
  }

  private fromForwarded(header: string, secure: boolean): ClientOrigin | null {
    if (header.length > MAX_HEADER_CHARS) return null;
    let elements: Record<string, string>[];
    try {
      elements = parseForwarded(header);
    } catch {
      return null;
    }
    // forwarded-parse keeps the last of a repeated parameter; RFC 7239 forbids the repeat.
    if (repeatsAParameter(header)) return null;
    elements = elements.slice(-MAX_HOPS);
    const { index, address } = this.client(elements.map((element) => element['for'] ?? ''));
    if (address === null) return null;
    // The element that names the client was written by the proxy that saw it: its proto and host.
    const element = elements[index];
    const proto = element?.['proto'];
    return { address, secure: proto === undefined ? secure : isSecure(proto), host: element?.['host'] };
  }

  /**
   * Walks the hops from the right (the peer, trusted, is hop 0): the first untrusted one is the
   * client; if all are trusted, the leftmost. A hop that is not an address (`unknown`, an obfuscated
   * name, garbage) ends the walk with nothing believed: the peer's own address is used.
   */
  private client(hops: readonly string[]): { index: number; address: string | null } {
    const trust = this.trust;
    let hop = 1;
    for (let index = hops.length - 1; index >= 0; index--, hop++) {
      const address = normalize(hops[index] ?? '');
      if (address === null) return { index, address: null };
      if (index === 0 || trust === null || !trust(address, hop)) return { index, address };
    }
    return { index: -1, address: null };
  }
}

/**
 * Whether one element of a Forwarded header names a parameter twice (`for=a;for=b`), which RFC 7239
 * section 4 forbids. Reads names only, outside quoted strings (which may hold `,`, `;` and escapes).
 */
function repeatsAParameter(header: string): boolean {
  let names = new Set<string>();
  let name = '';
  let inName = true;
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i] as string;
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === '=' && inName) {
      const key = name.trim().toLowerCase();
      if (names.has(key)) return true;
      names.add(key);
      inName = false;
    } else if (c === ';' || c === ',') {
      if (c === ',') names = new Set();
      name = '';
      inName = true;
    } else if (inName) name += c;
  }
  return false;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function first(value: string | string[] | undefined): string | undefined {
  const joined = single(value);
  const head = joined?.split(',', 1)[0]?.trim();
  return head === '' ? undefined : head;
}

function isSecure(proto: string): boolean {
  const scheme = proto.trim().toLowerCase();
  return scheme === 'https' || scheme === 'wss';
}

/** '[2001:db8::1]:4711' -> '2001:db8::1', '192.0.2.60:80' -> '192.0.2.60'; null when not an address. */
function normalize(hop: string): string | null {
  let value = hop.trim();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    value = value.slice(1, end);
  } else if (value.split(':').length === 2) {
    value = value.slice(0, value.indexOf(':'));
  }
  return isIP(value) === 0 ? null : value;
}
