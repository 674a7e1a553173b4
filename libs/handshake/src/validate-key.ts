const EQUALS = 0x3d;

function isBase64Char(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2b ||
    c === 0x2f
  );
}

// 16 bytes are 128 bits but 22 base64 digits carry 132, so the last digit's low
// 4 bits are padding. Only 'A', 'Q', 'g' and 'w' leave them zero, which is what
// makes decode-then-encode round-trip (RFC 4648 §3.5 canonical encoding).
function isCanonicalLastDigit(c: number): boolean {
  return c === 0x41 || c === 0x51 || c === 0x67 || c === 0x77;
}

/**
 * RFC 6455 §4.2.1: Sec-WebSocket-Key is the standard, padded base64 of exactly
 * 16 bytes. Stricter than ws's /^[+/0-9A-Za-z]{22}==$/, which also lets
 * non-canonical encodings through.
 */
export function isValidWebSocketKey(key: string): boolean {
  if (key.length !== 24 || key.charCodeAt(22) !== EQUALS || key.charCodeAt(23) !== EQUALS) return false;
  for (let i = 0; i < 21; i++) {
    if (!isBase64Char(key.charCodeAt(i))) return false;
  }
  return isCanonicalLastDigit(key.charCodeAt(21));
}
