const SP = 0x20;
const HTAB = 0x09;

// RFC 7230 §3.2.6 tchar, indexed by char code; anything >= 128 is never a tchar.
const TCHAR = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

export function isTchar(code: number): boolean {
  return code < 128 && TCHAR[code] === 1;
}

export function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    if (!isTchar(s.charCodeAt(i))) return false;
  }
  return true;
}

export function isOws(code: number): boolean {
  return code === SP || code === HTAB;
}

/**
 * Strict split of a comma list spread over every occurrence of one header.
 * Returns null when any element is empty (`a,,b`, `a,`, an empty value):
 * for Sec-WebSocket-Protocol we treat that as malformed, as ws does.
 */
export function splitHeaderList(values: readonly string[]): string[] | null {
  const items: string[] = [];
  for (const value of values) {
    let from = 0;
    for (;;) {
      const comma = value.indexOf(',', from);
      const to = comma === -1 ? value.length : comma;
      let s = from;
      let e = to;
      while (s < e && isOws(value.charCodeAt(s))) s++;
      while (e > s && isOws(value.charCodeAt(e - 1))) e--;
      if (s === e) return null;
      items.push(value.slice(s, e));
      if (comma === -1) break;
      from = comma + 1;
    }
  }
  return items;
}

function lowerAscii(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code + 0x20 : code;
}

/**
 * Lenient, allocation-free membership test for lists such as `Connection`
 * (RFC 7230 #rule: recipients ignore empty elements). ASCII case-insensitive.
 */
export function hasToken(values: readonly string[], token: string): boolean {
  const n = token.length;
  if (n === 0) return false;
  for (const value of values) {
    let from = 0;
    while (from <= value.length) {
      let comma = value.indexOf(',', from);
      if (comma === -1) comma = value.length;
      let s = from;
      let e = comma;
      while (s < e && isOws(value.charCodeAt(s))) s++;
      while (e > s && isOws(value.charCodeAt(e - 1))) e--;
      if (e - s === n) {
        let i = 0;
        while (i < n && lowerAscii(value.charCodeAt(s + i)) === lowerAscii(token.charCodeAt(i))) i++;
        if (i === n) return true;
      }
      from = comma + 1;
    }
  }
  return false;
}
