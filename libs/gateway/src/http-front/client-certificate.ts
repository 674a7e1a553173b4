import { type Socket } from 'node:net';
import { type TLSSocket } from 'node:tls';
import { type ClientCertificate } from '#broker/handshake';

/**
 * The certificate the client presented to this socket's TLS handshake, if any. Node leaves
 * verification to us (the server asks with requestCert, and rejectUnauthorized is off so that
 * endpoints without certificates keep working): `authorized` is OpenSSL's verdict on the chain
 * against tls.caFile and the validity dates.
 */
export function clientCertificateOf(peer: Socket | undefined): ClientCertificate | undefined {
  // Not instanceof: an HTTP/2 session's socket is a proxy of the TLS socket. And not `encrypted`
  // alone: a request bridged from HTTP/2 arrives on an in-memory socket that says it is encrypted.
  const socket = peer as TLSSocket | undefined;
  if (socket?.encrypted !== true || typeof socket.getPeerCertificate !== 'function') return undefined;
  const certificate = socket.getPeerCertificate();
  // No certificate: Node returns an empty object (null once the socket is gone).
  if (certificate === null || certificate.raw === undefined) return undefined;
  // Both: with renegotiation (refused by brokerHttpsOptions) Node would keep an earlier `authorized`.
  const authorized = socket.authorized && (socket.authorizationError ?? null) === null;
  return {
    authorized,
    error: authorized ? null : String(socket.authorizationError ?? 'not verified'),
    commonName: single(certificate.subject?.CN),
    organization: single(certificate.subject?.O),
    subjectAltNames: (certificate.subjectaltname ?? '').split(', ').filter((name) => name !== ''),
  };
}

/** A subject field Node gives as an array when it occurs more than once: then it names no one. */
function single(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
