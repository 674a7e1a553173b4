import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { type BrokerConfig } from '#broker/config';
import { IncomingMessage, type Server, ServerResponse } from 'node:http';
import { type Server as TlsServer } from 'node:tls';
import { type Logger } from 'pino';
import { ConnectionRegistry } from '../connections/connection-registry.js';
import { EndpointRegistry } from '../upgrade/endpoint-registry.js';
import { applyHttpLimits, closeSilentSockets } from '../http-front/http-limits.js';
import { constructRequestsWith } from '../http-front/node-internals.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { Http2Front } from '../http-front/http2-front.js';
import { watchTlsFiles } from '../http-front/tls-options.js';
import { acceptProxyProtocol } from '../http-front/proxy-protocol.js';
import proxyaddr from 'proxy-addr';
import { flushAndExit } from '../observability/logger.js';
import { Heartbeat } from '../connections/heartbeat.js';
import { HandshakeGuards } from '../upgrade/handshake-guards.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { TokenVerifier } from '../upgrade/token-verifier.js';
import { UpgradeGateway } from '../upgrade/upgrade-gateway.js';
import { BROKER_CONFIG, BROKER_LOGGER } from '../upgrade/tokens.js';
import { CLOSE } from '#broker/kit';

/**
 * Boot and shutdown in one explicit order. Boot: discover modules, compile endpoints against them,
 * import keys, attach to the HTTP server, start heartbeats. Shutdown: refuse new upgrades (503),
 * let modules say goodbye, close 1001, and wait for the drain or the drain timeout; after a signal,
 * exit 0 with the logs flushed.
 */
@Injectable()
export class GatewayLifecycle
  implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown
{
  /** HTTP/2 on the listener, with http.http2. */
  private http2: Http2Front | null = null;
  /** Stops polling the TLS files, with tls. */
  private unwatchTls: (() => void) | null = null;
  /** What the shutdown's drain did, for the line that says the broker stopped. */
  private drain: { connections: number; terminated: number; startedAt: number } | null = null;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    private readonly adapterHost: HttpAdapterHost,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly guards: HandshakeGuards,
    private readonly endpoints: EndpointRegistry,
    private readonly verifier: TokenVerifier,
    private readonly gateway: UpgradeGateway,
    private readonly heartbeat: Heartbeat,
    private readonly connections: ConnectionRegistry,
    private readonly metrics: GatewayMetrics,
  ) {}

  /**
   * With Express as Nest's adapter, the server makes each request and response with Express's own
   * prototypes, so that Express has none to change (constructRequestsWith says why that matters).
   */
  private constructAsExpress(server: Server): void {
    const app = this.adapterHost.httpAdapter.getInstance() as { request?: unknown; response?: unknown };
    if (app.request instanceof IncomingMessage && app.response instanceof ServerResponse)
      constructRequestsWith(server, app.request, app.response);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subprotocols.discover();
    this.guards.discover();
    this.endpoints.compile();
    await this.verifier.init();
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    this.constructAsExpress(server);
    applyHttpLimits(
      server,
      this.config,
      (address) => this.connections.refusesAtAccept(address),
      () => this.metrics.refusedAtAccept.inc(),
    );
    const { http, tls } = this.config;
    if (tls !== undefined) this.unwatchTls = watchTlsFiles(server as unknown as TlsServer, tls, this.logger);
    if (http.http2) {
      // Before the PROXY protocol's hold: a header comes before the HTTP/2 preface, not after.
      this.http2 = Http2Front.attach(server, {
        // One connection is one address: its WebSockets meet the per-address limit (429) well before
        // nghttp2 refuses streams; the rest is room for ordinary requests beside them.
        maxStreams: this.config.limits.maxConnectionsPerAddress + 100,
        idleTimeoutMs: http.requestTimeoutMs,
        maxHeaderBytes: http.maxHeaderSize,
        requestTimeoutMs: http.requestTimeoutMs,
        connect: this.gateway.onExtendedConnect,
        flooded: (address) => this.connections.penalize(address),
      });
    }
    if (http.proxyProtocol) {
      const trusted = proxyaddr.compile([...http.trustedProxies]);
      acceptProxyProtocol(server, {
        trusts: (address) => trusted(address, 0),
        timeoutMs: http.headersTimeoutMs,
        refused: (reason, client) =>
          this.logger.warn({ client, reason }, 'connection refused before its request'),
      });
    }
    this.gateway.attach(server);
    for (const { spec, config } of this.endpoints.all()) this.heartbeat.start(spec, config.pingIntervalMs);
  }

  async beforeApplicationShutdown(signal?: string): Promise<void> {
    if (signal !== undefined) this.logger.info({ signal }, 'shutting down');
    const started = Date.now();
    this.connections.draining = true;
    this.heartbeat.stop();
    this.unwatchTls?.();
    const open = [...this.connections.all()];
    this.logger.info({ connections: open.length }, 'draining connections');
    for (const { connection, module } of open) {
      try {
        module.handler.goodbye?.(connection);
      } catch (err) {
        this.logger.error({ module: module.options.name, err: (err as Error).message }, 'goodbye failed');
      }
      connection.close(CLOSE.goingAway, 'server shutting down');
    }
    const deadline = Date.now() + this.config.shutdown.drainTimeoutMs;
    while (this.connections.open() > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const left = [...this.connections.all()];
    for (const { ws } of left) ws.terminate();
    this.drain = { connections: open.length, terminated: left.length, startedAt: started };
    this.gateway.closeAll();
    this.http2?.close(Math.max(0, deadline - Date.now()));
    await this.closeHttpConnections(deadline);
  }

  /**
   * Plain HTTP connections go too: idle ones at once, the rest (a request in flight, a keep-alive
   * client, which gets 503 and Connection: close from now on) by the drain deadline. Nest's close
   * of the server would otherwise wait for every one of them.
   */
  private async closeHttpConnections(deadline: number): Promise<void> {
    const server = this.adapterHost.httpAdapter.getHttpServer() as Server;
    closeSilentSockets(server);
    server.closeIdleConnections();
    const open = () =>
      new Promise<number>((resolve) => server.getConnections((_err, count) => resolve(count)));
    while ((await open()) > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      server.closeIdleConnections();
    }
    server.closeAllConnections();
  }

  /**
   * Nest's shutdown hooks end by raising the signal again, which kills the process with it (status
   * 143, which orchestrators report as a crash) before the batched log lines are out. Listening for
   * that second signal turns it into a flushed exit 0 once every module has shut down.
   */
  onApplicationShutdown(signal?: string): void {
    const drain = this.drain;
    this.logger.info(
      drain === null
        ? {}
        : {
            connections: drain.connections,
            closedByClients: drain.connections - drain.terminated,
            terminatedAtDeadline: drain.terminated,
            shutdownMs: Date.now() - drain.startedAt,
          },
      'broker stopped',
    );
    if (signal !== undefined) process.once(signal, () => flushAndExit(this.logger, 0));
  }
}
