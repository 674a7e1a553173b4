import { constants, X509Certificate } from 'node:crypto';
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { type Server as TlsServer, type SecureContextOptions } from 'node:tls';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';

type TlsConfig = NonNullable<BrokerConfig['tls']>;

/**
 * The broker config's `tls` as NestFactory.create's `httpsOptions`: certificate and key; with
 * `caFile`, a request for a client certificate that TLS itself does not enforce (endpoints that
 * need none keep working; OCPP security profile 3 checks it before the 101); with `http.http2`,
 * ALPN offering h2 before http/1.1.
 */
export function brokerHttpsOptions(
  tls: TlsConfig,
  http: Pick<BrokerConfig['http'], 'http2'> = { http2: false },
): SecureContextOptions & { requestCert?: boolean; rejectUnauthorized?: boolean; ALPNProtocols?: string[] } {
  return {
    ...readTlsFiles(tls),
    ...(tls.caFile !== undefined ? { requestCert: true, rejectUnauthorized: false } : {}),
    ...(http.http2 ? { ALPNProtocols: ['h2', 'http/1.1'] } : {}),
  };
}

/**
 * The files as a secure context's options. No TLS 1.2 renegotiation: Node reports the certificate
 * of the latest handshake and keeps `authorized` from an earlier one, so a client could show one
 * certificate and then another. A CA or CRL file must hold at least one PEM object, each of which
 * parses: OpenSSL takes an empty or truncated bundle without a word, which would refuse every client.
 */
function readTlsFiles(tls: TlsConfig): SecureContextOptions {
  return {
    cert: readFileSync(tls.certFile),
    key: readFileSync(tls.keyFile),
    secureOptions: constants.SSL_OP_NO_RENEGOTIATION,
    ...(tls.caFile !== undefined ? { ca: certificates(tls.caFile) } : {}),
    ...(tls.crlFile !== undefined ? { crl: pemObjects(tls.crlFile, 'X509 CRL') } : {}),
  };
}

function certificates(file: string): string[] {
  const pems = pemObjects(file, 'CERTIFICATE');
  for (const pem of pems) new X509Certificate(pem);
  return pems;
}

function pemObjects(file: string, label: string): string[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----[^-]+-----END ${label}-----`, 'g');
  const found = readFileSync(file, 'latin1').match(pattern) ?? [];
  if (found.length === 0) throw new Error(`${file}: no ${label} in PEM form`);
  return found;
}

/**
 * Certificates renewed on disk (certbot, cert-manager, a new CA bundle or CRL) are taken without a
 * restart: the files are polled every `reloadIntervalMs` (a rename onto the path counts too); once
 * a change has rested for one more interval (so a file caught being written is read whole), all of
 * them load into a new secure context for the next TLS handshakes, and open connections keep
 * theirs. A set that does not load (a key written before its certificate, an empty CA bundle)
 * leaves the one in use and is tried again at the next change. Returns the stop.
 */
export function watchTlsFiles(server: TlsServer, tls: TlsConfig, logger: Logger): () => void {
  const files = [tls.certFile, tls.keyFile, tls.caFile, tls.crlFile].filter((f) => f !== undefined);
  let settle: NodeJS.Timeout | undefined;
  const reload = (): void => {
    try {
      server.setSecureContext(readTlsFiles(tls));
      logger.info({ files }, 'TLS files reloaded');
    } catch (err) {
      logger.warn({ files, err: (err as Error).message }, 'TLS files not reloaded: the ones in use stay');
    }
  };
  // libuv calls this only when a file's stat changed.
  const changed = (): void => {
    clearTimeout(settle);
    settle = setTimeout(reload, tls.reloadIntervalMs).unref();
  };
  for (const file of files) watchFile(file, { interval: tls.reloadIntervalMs, persistent: false }, changed);
  return () => {
    clearTimeout(settle);
    for (const file of files) unwatchFile(file, changed);
  };
}
