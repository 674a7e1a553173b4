import { parse as parseCookie } from 'cookie';
import { type AuthPolicy, type CredentialCarrier, type ParsedRequest } from './types.js';

export interface FoundCredential {
  readonly carrier: CredentialCarrier;
  /** The token, or null when the carrier is present but malformed (e.g. `Authorization: Basic ...`). */
  readonly token: string | null;
}

/**
 * Finds the credential the endpoint accepts, in a fixed order: header, subprotocol, cookie, query.
 * The first carrier present wins; a malformed one is reported, never skipped, so a bad credential
 * cannot be hidden behind a good one.
 */
export function extractCredential(
  request: ParsedRequest,
  policy: AuthPolicy,
  offered: readonly string[],
): FoundCredential | null {
  const { carriers } = policy;
  if (carriers.has('header')) {
    const auth = request.values('authorization');
    if (auth.length > 0) {
      const match = auth.length === 1 ? /^Bearer +([^\s]+) *$/i.exec(auth[0] as string) : null;
      return { carrier: 'header', token: match ? (match[1] as string) : null };
    }
  }
  if (carriers.has('subprotocol')) {
    const item = offered.find((p) => p.startsWith(policy.subprotocolPrefix));
    if (item !== undefined) {
      const token = item.slice(policy.subprotocolPrefix.length);
      return { carrier: 'subprotocol', token: token.length > 0 ? token : null };
    }
  }
  if (carriers.has('cookie')) {
    for (const header of request.values('cookie')) {
      const value = parseCookie(header)[policy.cookieName];
      if (value !== undefined) return { carrier: 'cookie', token: value.length > 0 ? value : null };
    }
  }
  if (carriers.has('query') && request.query.length > 0) {
    const values = new URLSearchParams(request.query).getAll(policy.queryParam);
    if (values.length > 0) {
      return {
        carrier: 'query',
        token: values.length === 1 && values[0] !== '' ? (values[0] as string) : null,
      };
    }
  }
  return null;
}

/** Offered subprotocols with the credential items removed: those are never selected or echoed. */
export function withoutCredentialItems(offered: readonly string[], policy: AuthPolicy): readonly string[] {
  if (!policy.carriers.has('subprotocol')) return offered;
  return offered.filter((p) => !p.startsWith(policy.subprotocolPrefix));
}
