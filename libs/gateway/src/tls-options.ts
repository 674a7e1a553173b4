import { readFileSync, unwatchFile, watchFile, type Stats } from 'node:fs';
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

function readTlsFiles(tls: TlsConfig): SecureContextOptions {
  return {
    cert: readFileSync(tls.certFile),
    key: readFileSync(tls.keyFile),
    ...(tls.caFile !== undefined ? { ca: readFileSync(tls.caFile) } : {}),
  };
}

/**
 * Certificates renewed on disk (certbot, cert-manager, a new CA bundle) are taken without a
 * restart: the files are polled every `reloadIntervalMs` (a rename onto the path counts too), and
 * a change loads all of them into a new secure context for the next TLS handshakes; open
 * connections keep theirs. A set that does not load (a key written before its certificate, a
 * truncated file) leaves the one in use and is tried again at the next change.
 */
export function watchTlsFiles(server: TlsServer, tls: TlsConfig, logger: Logger): () => void {
  const files = [tls.certFile, tls.keyFile, ...(tls.caFile !== undefined ? [tls.caFile] : [])];
  const reload = (now: Stats, before: Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.ino === before.ino && now.size === before.size) return;
    try {
      server.setSecureContext(readTlsFiles(tls));
      logger.info({ files }, 'TLS files reloaded');
    } catch (err) {
      logger.warn({ files, err: (err as Error).message }, 'TLS files not reloaded: the ones in use stay');
    }
  };
  for (const file of files) watchFile(file, { interval: tls.reloadIntervalMs, persistent: false }, reload);
  return () => {
    for (const file of files) unwatchFile(file, reload);
  };
}
