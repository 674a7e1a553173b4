import { CredentialError } from '#broker/handshake';

/**
 * A compact JWS of three canonical base64url segments, checked before jose sees it: jose decodes with
 * a lenient decoder, which takes a last character whose unused bits differ (a second spelling of one
 * signature).
 */
export function assertCompactForm(token: string): void {
  const segments = token.split('.');
  if (segments.length !== 3) throw new CredentialError('the token is malformed');
  for (const segment of segments) decodeSegment(segment);
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Canonical base64url only: Buffer would also take a dangling character or non-zero padding bits. */
export function decodeSegment(segment: string): Buffer {
  if (!BASE64URL.test(segment) || segment.length % 4 === 1)
    throw new CredentialError('the token is malformed');
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) throw new CredentialError('the token is malformed');
  return bytes;
}
