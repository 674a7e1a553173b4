/**
 * A Host header value as RFC 9112 section 3.2 requires (uri-host [ ":" port ], RFC 3986 section 3.2.2):
 * a bracketed IP literal, or a non-empty run of reg-name characters (which covers IPv4), then an
 * optional port of digits. A server must answer 400 to anything else: the value also feeds the
 * same-origin check, where userinfo or a path must not pass for a host.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]*)?$/;

export function isValidHost(value: string): boolean {
  return HOST.test(value);
}
