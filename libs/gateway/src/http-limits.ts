import { readFileSync } from 'node:fs';
import { type Server } from 'node:http';
import { Server as TlsServer } from 'node:tls';
import { type BrokerConfig } from '#broker/config';

/**
 * Sets the header size limit (431) and the slowloris timeouts on whichever HTTP server the
 * application created (NestFactory.create makes a bare one). Node reads `maxHeaderSize` for each new
 * connection and the timeouts at each check, and starts the checks on 'listening', so setting them
 * after creation and before listen is as good as passing them to createServer.
 */
export function applyHttpLimits(server: Server, config: BrokerConfig): void {
  const { http, tls } = config;
  if (tls !== undefined && !(server instanceof TlsServer)) {
    throw new Error(
      'tls: the broker config sets tls, but the HTTP server is plain: pass ' +
        '`httpsOptions: brokerHttpsOptions(config.tls)` to NestFactory.create (startBroker does this)',
    );
  }
  (server as Server & { maxHeaderSize: number }).maxHeaderSize = http.maxHeaderSize;
  server.headersTimeout = http.headersTimeoutMs;
  server.requestTimeout = http.requestTimeoutMs;
  // Node checks the two timeouts above only this often (30 s by default): keep slowloris short.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    1000,
    http.headersTimeoutMs,
  );
}

/** The certificate and key of the broker config's `tls`, as NestFactory.create's `httpsOptions`. */
export function brokerHttpsOptions(tls: NonNullable<BrokerConfig['tls']>): { cert: Buffer; key: Buffer } {
  return { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) };
}
