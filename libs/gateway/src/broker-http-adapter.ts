import { createServer as createHttpServer, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { ExpressAdapter } from '@nestjs/platform-express';
import { type BrokerConfig } from '#broker/config';

/**
 * Nest's Express adapter creates a bare http.Server; the broker needs the header size limit (431)
 * and the slowloris timeouts set on it, and TLS when configured.
 */
export class BrokerHttpAdapter extends ExpressAdapter {
  constructor(private readonly brokerConfig: BrokerConfig) {
    super();
    this.getInstance<{ disable(setting: string): void }>().disable('x-powered-by');
  }

  override initHttpServer(): void {
    const { http, tls } = this.brokerConfig;
    const options: ServerOptions = {
      maxHeaderSize: http.maxHeaderSize,
      headersTimeout: http.headersTimeoutMs,
      requestTimeout: http.requestTimeoutMs,
      // Node checks the two timeouts above only this often (30 s by default): keep slowloris short.
      connectionsCheckingInterval: Math.min(1000, http.headersTimeoutMs),
    };
    this.httpServer = tls
      ? createHttpsServer(
          { ...options, cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) },
          this.getInstance(),
        )
      : createHttpServer(options, this.getInstance());
  }
}
