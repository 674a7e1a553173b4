import { type Duplex } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { opensEndpoint } from '#broker/auth';
import { type Accept, type Principal } from '#broker/handshake';
import { type Logger } from 'pino';
import { type WebSocket } from 'ws';
import { ConnectionRegistry, type TrackedConnection } from './connection-registry.js';
import { onCredentialExpiry } from './credential-expiry.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { FirstMessageAuth } from './first-message-auth.js';
import { flatUuid } from './flat-uuid.js';
import { GatewayMetrics } from './metrics.js';
import { SubprotocolRegistry } from './subprotocol-registry.js';
import { type ConnectionContext } from './subprotocol.types.js';
import { TokenVerifier } from './token-verifier.js';
import { BROKER_LOGGER } from './tokens.js';
import { WsConnection } from './ws-connection.js';

/**
 * Everything after the 101: wraps the socket for the module, tracks it, enforces the message-type
 * policy, holds it for first-message authentication when the handshake asked for that, and
 * cleans up on close. Modules never see `ws`.
 */
@Injectable()
export class ConnectionOpener {
  constructor(
    private readonly connections: ConnectionRegistry,
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly metrics: GatewayMetrics,
    private readonly verifier: TokenVerifier,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
  ) {}

  open(ws: WebSocket, socket: Duplex, decision: Accept, remoteAddress: string): void {
    const module = this.subprotocols.get(decision.module);
    if (module === undefined) throw new Error(`module ${decision.module} vanished`);
    const endpointConfig = this.endpoints.configOf(decision.endpoint);
    const metrics = this.metrics.forConnection(decision.endpoint.path, decision.protocol ?? decision.module);
    const id = flatUuid();
    // Created on first use: most connections never log after the handshake line.
    let logger: Logger | null = null;
    const log = (): Logger =>
      (logger ??= this.logger.child({
        connection: id,
        endpoint: decision.endpoint.path,
        module: module.options.name,
      }));
    const connection = new WsConnection(id, ws, socket, endpointConfig.outboundBufferCap, {
      sent: (bytes) => {
        tracked.bytesOut += bytes;
        metrics.traffic.messagesOut++;
        metrics.traffic.bytesOut += bytes;
      },
      overflowed: (buffered) => log().warn({ buffered }, 'outbound buffer limit exceeded, closing 1008'),
      failed: (err) => log().error({ err: err.message }, 'module handler failed; connection closed 1011'),
    });
    const tracked: TrackedConnection = {
      connection,
      ws,
      endpoint: decision.endpoint,
      module,
      remoteAddress,
      openedAt: new Date(),
      principal: decision.principal,
      alive: true,
      bytesIn: 0,
      bytesOut: 0,
    };
    this.connections.add(tracked);
    metrics.accepted++;
    metrics.open++;

    const policy = module.options.messages ?? 'any';
    let gate: FirstMessageAuth | null = null;

    ws.on('error', (err) => this.logger.debug({ connection: id, err: err.message }, 'websocket error'));
    ws.on('pong', () => {
      tracked.alive = true;
    });
    let stopExpiry = (): void => undefined;
    ws.once('close', (code) => {
      gate?.cancel();
      stopExpiry();
      this.connections.remove(tracked);
      metrics.open--;
      this.logger.debug({ connection: id, code }, 'connection closed');
    });
    const receive = (data: Buffer, isBinary: boolean): void => {
      if (policy === 'text' && isBinary) return connection.close(1003, 'binary messages are not accepted');
      if (policy === 'binary' && !isBinary) return connection.close(1003, 'text messages are not accepted');
      connection.deliver(data, isBinary);
    };
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      metrics.traffic.messagesIn++;
      metrics.traffic.bytesIn += data.byteLength;
      tracked.bytesIn += data.byteLength;
      tracked.alive = true;
      // The auth message is text even for a binary protocol: the gate reads it before the type policy.
      if (gate !== null) return gate.push(data, isBinary);
      receive(data, isBinary);
    });

    const watchExpiry = (principal: Principal | null): (() => void) =>
      onCredentialExpiry(principal, () => {
        log().info({ subject: principal?.subject }, 'credential expired, closing 1008');
        connection.close(1008, 'credential expired');
      });
    const start = (principal: Principal | null): void => {
      tracked.principal = principal;
      stopExpiry = watchExpiry(principal);
      const context: ConnectionContext = {
        id,
        endpoint: decision.endpoint.path,
        protocol: decision.protocol,
        params: decision.params,
        remoteAddress,
        principal,
        authMode: endpointConfig.auth.mode,
        verifyToken: (token) => this.verifier.verify(token, 'first-message'),
        identify: (identified) => {
          tracked.principal = identified;
          stopExpiry();
          stopExpiry = watchExpiry(identified);
        },
      };
      const failed = (err: unknown): void => {
        log().error({ err: (err as Error).message }, 'module failed to open the connection');
        connection.close(1011, 'internal error');
      };
      try {
        // open() is typed void, but an async one is assignable: its rejection must not escape either.
        const result: unknown = module.handler.open(connection, context);
        if (result instanceof Promise) result.catch(failed);
      } catch (err) {
        failed(err);
      }
    };

    if (!decision.awaitFirstMessageAuth) return start(decision.principal);
    const auth = endpointConfig.auth;
    gate = new FirstMessageAuth(
      {
        timeoutMs: auth.firstMessageTimeoutMs,
        maxBytes: auth.firstMessageMaxBytes,
        maxQueued: auth.firstMessageMaxQueued,
      },
      (token) => this.verifier.verify(token, 'first-message'),
      {
        accepted: (principal, held) => {
          gate = null;
          if (!opensEndpoint(principal, decision.endpoint.path)) {
            log().info(
              { subject: principal.subject },
              'first-message credential does not open this endpoint',
            );
            return connection.close(1008, `this credential does not open ${decision.endpoint.path}`);
          }
          log().info({ subject: principal.subject }, 'first-message authentication accepted');
          start(principal);
          for (const [data, isBinary] of held) receive(data, isBinary);
        },
        refused: (code, reason) => {
          log().info({ code, reason }, 'first-message authentication refused');
          connection.close(code, reason);
        },
      },
    );
  }
}
