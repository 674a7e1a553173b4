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
  // Not instanceof: an HTTP/2 session's socket is a proxy of the TLS socket.
  if (peer === undefined || (peer as TLSSocket).encrypted !== true) return undefined;
  const socket = peer as TLSSocket;
  const certificate = socket.getPeerCertificate();
  // No certificate: Node returns an empty object (null once the socket is gone).
  if (certificate === null || certificate.raw === undefined) return undefined;
  const cn: unknown = certificate.subject?.CN;
  return {
    authorized: socket.authorized,
    error: socket.authorized ? null : String(socket.authorizationError ?? 'not verified'),
    commonName: typeof cn === 'string' ? cn : null,
  };
}
