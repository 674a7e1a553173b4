/**
 * The password of an `Authorization: Basic` header whose user is `identity`, as bytes; null when the
 * header is absent, malformed, or names another user. The identity may itself hold colons (the
 * OCPP security whitepaper allows them), so the split is after the known identity, not at the first
 * colon; the password may be any bytes (an OCPP AuthorizationKey need not be UTF-8).
 */
export function basicPassword(values: readonly string[], identity: string): Buffer | null {
  if (values.length !== 1) return null;
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(values[0] as string);
  if (match === null) return null;
  const decoded = Buffer.from(match[1] as string, 'base64');
  const user = Buffer.from(`${identity}:`, 'utf8');
  if (decoded.length < user.length || !decoded.subarray(0, user.length).equals(user)) return null;
  return decoded.subarray(user.length);
}
