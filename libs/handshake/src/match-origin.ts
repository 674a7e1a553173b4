/**
 * Entries: 'https://app.example.com', 'http://localhost:3000', 'http://[::1]:8080',
 * 'https://*.example.com' (any subdomain, never the apex), 'null', or '*'.
 * A '*' entry accepts every Origin value, including 'null' and malformed ones:
 * it disables cross-site WebSocket hijacking (CSWSH) protection entirely.
 */
export type OriginAllowlist = readonly string[];

export interface OriginMatcher {
  matches(origin: string): boolean;
}

const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const MAX_PORT = 65535;

function isUpper(c: number): boolean {
  return c >= 0x41 && c <= 0x5a;
}

function isAlpha(c: number): boolean {
  return isUpper(c) || (c >= 0x61 && c <= 0x7a);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

// RFC 3986 scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
function isSchemeChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 0x2b || c === 0x2d || c === 0x2e;
}

// Browsers send hosts already IDNA-encoded, so ASCII letters, digits, '-', '_' and '.' suffice.
function isHostChar(c: number): boolean {
  return isAlpha(c) || isDigit(c) || c === 0x2d || c === 0x5f;
}

function defaultPort(scheme: string): string | null {
  switch (scheme) {
    case 'http':
    case 'ws':
      return '80';
    case 'https':
    case 'wss':
      return '443';
    default:
      return null;
  }
}

/**
 * Canonical 'scheme://host[:port]': scheme and host lower-cased, a default port
 * (80 for http/ws, 443 for https/wss) dropped. 'null' stays 'null'. null when the
 * value is not a serialized origin (path, query, fragment, userinfo, trailing
 * slash, whitespace, empty DNS label, port with leading zeros or out of range).
 * Any scheme is allowed, since extensions and app shells send e.g. 'chrome-extension://id'.
 * Returns the argument itself when it is already canonical, so the common case allocates nothing.
 */
export function normalizeOrigin(origin: string): string | null {
  if (origin === 'null') return 'null';
  const len = origin.length;
  let upper = false;

  let i = 0;
  if (len === 0 || !isAlpha(origin.charCodeAt(0))) return null;
  for (; i < len && isSchemeChar(origin.charCodeAt(i)); i++) upper ||= isUpper(origin.charCodeAt(i));
  const schemeEnd = i;
  if (!origin.startsWith('://', schemeEnd)) return null;

  i = schemeEnd + 3;
  if (origin.charCodeAt(i) === OPEN_BRACKET) {
    let colons = 0;
    for (i++; i < len; i++) {
      const c = origin.charCodeAt(i);
      if (c === COLON) colons++;
      else if (!isHexDigit(c) && c !== 0x2e) break;
      upper ||= isUpper(c);
    }
    if (colons < 2 || origin.charCodeAt(i) !== CLOSE_BRACKET) return null;
    i++;
  } else {
    let labelStart = i;
    for (; i < len; i++) {
      const c = origin.charCodeAt(i);
      if (c === 0x2e) {
        if (i === labelStart) return null;
        labelStart = i + 1;
      } else if (isHostChar(c)) {
        upper ||= isUpper(c);
      } else {
        break;
      }
    }
    if (i === labelStart) return null;
  }
  const hostEnd = i;

  let dropPort = false;
  if (hostEnd < len) {
    if (origin.charCodeAt(hostEnd) !== COLON) return null;
    const portStart = hostEnd + 1;
    const digits = len - portStart;
    if (digits === 0 || digits > 5) return null;
    if (digits > 1 && origin.charCodeAt(portStart) === 0x30) return null;
    let port = 0;
    for (let p = portStart; p < len; p++) {
      const c = origin.charCodeAt(p);
      if (!isDigit(c)) return null;
      port = port * 10 + (c - 0x30);
    }
    if (port > MAX_PORT) return null;
    const scheme = origin.slice(0, schemeEnd);
    dropPort = defaultPort(upper ? scheme.toLowerCase() : scheme) === origin.slice(portStart);
  }

  if (!upper && !dropPort) return origin;
  const base = origin.slice(0, hostEnd);
  const lowered = upper ? base.toLowerCase() : base;
  return dropPort ? lowered : lowered + origin.slice(hostEnd);
}

interface Wildcard {
  readonly prefix: string; // 'https://'
  readonly suffix: string; // '.example.com' or '.example.com:8443'
}

function invalidEntry(entry: string, why: string): Error {
  return new Error(`Invalid origin allowlist entry ${JSON.stringify(entry)}: ${why}`);
}

const SHAPES = "expected 'scheme://host[:port]', 'scheme://*.domain[:port]', 'null' or '*'";

// hostStart indexes the '*.' in entry; scheme normalization keeps its length, so it also indexes base's host.
function compileWildcard(entry: string, hostStart: number): Wildcard {
  const base = normalizeOrigin(entry.slice(0, hostStart) + entry.slice(hostStart + 2));
  if (base === null || base === 'null') throw invalidEntry(entry, SHAPES);
  if (base.charCodeAt(hostStart) === OPEN_BRACKET) throw invalidEntry(entry, 'wildcards need a DNS name');
  return { prefix: base.slice(0, hostStart), suffix: `.${base.slice(hostStart)}` };
}

/**
 * Validates entries once, at config time (throws an Error naming the bad entry),
 * so that `matches` costs one normalization plus a Set lookup and a short suffix scan.
 * An empty allowlist matches nothing.
 */
export function compileAllowlist(entries: OriginAllowlist): OriginMatcher {
  let any = false;
  let allowNull = false;
  const exact = new Set<string>();
  const wildcards: Wildcard[] = [];

  for (const entry of entries) {
    if (entry === '*') {
      any = true;
      continue;
    }
    if (entry === 'null') {
      allowNull = true;
      continue;
    }
    const sep = entry.indexOf('://');
    if (sep > 0 && entry.startsWith('*.', sep + 3)) {
      wildcards.push(compileWildcard(entry, sep + 3));
      continue;
    }
    const normalized = normalizeOrigin(entry);
    if (normalized === null) throw invalidEntry(entry, SHAPES);
    exact.add(normalized);
  }

  if (any) return { matches: () => true };

  return {
    matches(origin: string): boolean {
      const normalized = normalizeOrigin(origin);
      if (normalized === null) return false;
      if (normalized === 'null') return allowNull;
      if (exact.has(normalized)) return true;
      for (const w of wildcards) {
        // The length check keeps the apex ('https://example.com') out; the label before
        // the suffix is non-empty because normalizeOrigin rejects empty labels.
        if (
          normalized.length > w.prefix.length + w.suffix.length &&
          normalized.startsWith(w.prefix) &&
          normalized.endsWith(w.suffix)
        ) {
          return true;
        }
      }
      return false;
    },
  };
}
