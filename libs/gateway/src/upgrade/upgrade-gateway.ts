import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { type IncomingHttpHeaders as Http2Headers, type ServerHttp2Stream } from 'node:http2';
import { type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import {
  decideHandshake,
  type HandshakeContext,
  type HandshakeDecision,
  type Reject,
} from '#broker/handshake';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { systemClock } from '#broker/kit';
import { ConnectionRegistry } from '../connections/connection-registry.js';
import { DecisionLog } from '../observability/decision-log.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { ForwardedHeaders } from '../http-front/forwarded.js';
import {
  acceptOrReject,
  attemptOf,
  decisionFields,
  extendedConnectAttempt,
  type Attempt,
} from './handshake-attempt.js';
import { HandshakeGuards } from './handshake-guards.js';
import { handshakeHooks } from './handshake-hooks.js';
import {
  parserRejection,
  plainPage,
  problemBody,
  rejectionConnection,
  respondRejection,
  writeRejection,
} from './handshake-responses.js';
import { type BridgedPeer } from '../http-front/http2-bridge.js';
import { GatewayMetrics } from '../observability/metrics.js';
import { RequestPace } from '../http-front/request-pace.js';
import { SocketOrder } from '../http-front/socket-order.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { TokenVerifier } from './token-verifier.js';
import { BROKER_CONFIG, BROKER_LOGGER } from './tokens.js';
import { destroySocket, WsHandoff } from './ws-handoff.js';

/**
 * The adapter between Node's HTTP server and the sans-IO handshake core: copies the request into
 * plain data, asks for a decision (its I/O in handshake-hooks.ts), writes the rejection or hands
 * the socket to ws (ws-handoff.ts), one request of a socket after the other (socket-order.ts), and
 * logs one line per decision. Plain requests on endpoint paths reach it as Express middleware.
 */
@Injectable()
export class UpgradeGateway {
  private context: HandshakeContext | null = null;
  private readonly order = new SocketOrder(
    (err, socket) => this.failed(err, socket),
    (socket) =>
      this.logger.warn(
        { client: (socket as Duplex & { remoteAddress?: string }).remoteAddress },
        'connection closed: too many pipelined requests waiting',
      ),
  );
  /** Who the client is, believing only trusted proxies. */
  private readonly forwarded: ForwardedHeaders;
  /** Plain HTTP requests per client address, within their share of the loop (http.inputBudget). */
  private readonly pace: RequestPace;
  private readonly credentialPrefixes: readonly string[];
  /** The one line per decision. */
  private readonly decisions: DecisionLog;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly connections: ConnectionRegistry,
    private readonly handoff: WsHandoff,
    private readonly verifier: TokenVerifier,
    private readonly metrics: GatewayMetrics,
    private readonly guards: HandshakeGuards,
  ) {
    this.credentialPrefixes = [...new Set(config.endpoints.map((e) => e.auth.subprotocolPrefix))];
    this.decisions = new DecisionLog(logger);
    this.forwarded = new ForwardedHeaders(config.http.trustedProxies);
    this.pace = new RequestPace(config.http.inputBudget, systemClock);
  }

  attach(server: Server): void {
    this.context = {
      endpoints: this.endpoints.specs(),
      modules: this.subprotocols.specs(),
      limits: this.config.limits,
      counts: this.connections,
      hooks: handshakeHooks(this.verifier, this.subprotocols, this.guards),
    };
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node hands the socket over without an error listener; a reset must not crash the process.
      socket.on('error', destroySocket);
      // Node parses nothing after an upgrade: no later request waits for this one.
      this.order.run(socket, () => this.onUpgrade(server, req, socket, head), false);
    });
  }

  /**
   * Express middleware, first in the chain: each request takes its turn on its socket and keeps it
   * until its response has left, so that what is pipelined behind (an upgrade above all, whose 101 Node
   * would let out at once) waits, whoever answers it: a probe, the application, or `handleRequest`.
   * Nothing behind a refusal is served.
   */
  readonly inOrder = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    // Without http.inputBudget (the default) a request costs no address lookup and no clock read.
    if (!this.pace.enabled) return this.order.run(req.socket, () => served(res, next));
    this.order.run(req.socket, () => {
      // Paced by the client's address (behind a trusted proxy, the client's own).
      const address = this.forwarded.resolve(req).address;
      const serve = (): Promise<void> => {
        const started = systemClock.monotonic();
        return served(res, next).then(() => this.pace.charge(address, systemClock.monotonic() - started));
      };
      const wait = this.pace.wait(address);
      return wait > 0 ? new Promise<void>((resolve) => setTimeout(resolve, wait)).then(serve) : serve();
    });
  };

  /** Express middleware, after the probes: plain GETs on endpoint paths and upgrade attempts Node did not treat as upgrades. */
  readonly handleRequest = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const socket = req.socket;
    void this.decideRequest(req, res, next).catch((err: Error) => this.failed(err, socket));
  };

  private async decideRequest(req: IncomingMessage, res: ServerResponse, next: () => void): Promise<void> {
    const socket = req.socket;
    const attempt = attemptOf(req, this.forwarded.resolve(req));
    const decision = await this.decide(attempt);
    // An 'accept' cannot happen here: Node emits 'upgrade' whenever both headers are present.
    if (decision === null || decision.kind === 'pass' || decision.kind === 'accept') return next();
    if (decision.kind === 'plain') {
      this.metrics.plainRequests.inc({ endpoint: decision.endpoint.path });
      this.logDecision(attempt, 200, decision.endpoint.path, null, 'upgrade headers missing');
      const page = plainPage(decision.endpoint, decision.acceptsHtml);
      res.writeHead(200, { 'Content-Type': page.type, 'Cache-Control': 'no-store' }).end(page.body);
      return;
    }
    this.order.refuse(socket);
    this.refused(attempt, decision);
    res.shouldKeepAlive = false;
    const body = problemBody(decision);
    res
      .writeHead(decision.status, {
        ...decision.headers,
        Connection: rejectionConnection(decision),
        'Content-Type': 'application/problem+json',
        'Content-Length': Buffer.byteLength(body),
      })
      .end(body);
  }

  /** A handshake that threw where no answer could be written: logged, and the socket closed. */
  private failed(err: Error, socket: Duplex): void {
    this.logger.error({ err: err.message }, 'handshake failed');
    socket.destroy();
  }

  /** Requests Node's parser refused before any decision: answered in the same problem+json shape. */
  private onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const rejection = parserRejection(err, this.config.http);
    this.metrics.handshakes.inc({ outcome: 'rejected', status: String(rejection.status), endpoint: '' });
    this.metrics.refusals.add({
      at: Date.now(),
      status: rejection.status,
      endpoint: null,
      ...rejection.problem,
    });
    writeRejection(socket, rejection);
  }

  closeAll(): void {
    this.handoff.closeAll();
  }

  private async onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const attempt = attemptOf(req, this.forwarded.resolve(req));
    let decision: HandshakeDecision | null;
    try {
      decision = await this.decide(attempt);
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'handshake decision failed');
      decision = null;
    }
    if (decision?.kind === 'pass') return serveAsHttp(server, req, socket);
    decision = acceptOrReject(decision);
    if (decision.kind === 'reject') {
      this.order.refuse(socket);
      this.refused(attempt, decision);
      writeRejection(socket, decision);
      return;
    }
    if (socket.destroyed) {
      decision.release();
      this.logDecision(attempt, 0, decision.endpoint.path, null, 'client went away during the handshake');
      return;
    }
    this.handoff.accept(req, socket, head, decision, attempt.request.remoteAddress, () =>
      this.logDecision(
        attempt,
        101,
        decision.endpoint.path,
        decision.protocol ?? decision.module,
        'accepted',
      ),
    );
  }

  /**
   * An HTTP/2 extended CONNECT (RFC 8441): the same decision, answered on the stream (200 and the
   * WebSocket on the stream, or the refusal's status and problem), never on the shared connection.
   */
  readonly onExtendedConnect = (
    stream: ServerHttp2Stream,
    headers: Http2Headers,
    peer: BridgedPeer,
  ): void => {
    const client = this.forwarded.resolveFor(peer, headers);
    const attempt = extendedConnectAttempt(stream, headers, client);
    this.decide(attempt)
      .catch((err: Error) => {
        this.logger.error({ err: err.message }, 'handshake decision failed');
        return null;
      })
      .then((undecided) => {
        const decision = acceptOrReject(undecided);
        if (decision.kind === 'reject') {
          this.refused(attempt, decision);
          if (!stream.destroyed) respondRejection(stream, decision);
          return;
        }
        if (stream.destroyed) {
          decision.release();
          this.logDecision(attempt, 0, decision.endpoint.path, null, 'client went away during the handshake');
          return;
        }
        this.handoff.acceptHttp2(stream, decision, client.address, peer.encrypted, () => {
          this.metrics.http2WebSockets.inc({ endpoint: decision.endpoint.path });
          const subprotocol = decision.protocol ?? decision.module;
          this.logDecision(attempt, 200, decision.endpoint.path, subprotocol, 'accepted over HTTP/2');
        });
      })
      .catch((err: Error) => this.failed(err, stream));
  };

  private decide(attempt: Attempt): Promise<HandshakeDecision | null> {
    if (this.context === null) return Promise.resolve(null);
    return decideHandshake(attempt.request, this.context);
  }

  private refused(attempt: Attempt, decision: Reject): void {
    const endpoint = decision.endpoint?.path ?? null;
    this.metrics.handshakes.inc({
      outcome: 'rejected',
      status: String(decision.status),
      endpoint: endpoint ?? '',
    });
    this.metrics.refusals.add({ at: Date.now(), status: decision.status, endpoint, ...decision.problem });
    this.logDecision(attempt, decision.status, endpoint, null, decision.problem.title);
  }

  private logDecision(
    attempt: Attempt,
    status: number,
    endpoint: string | null,
    subprotocol: string | null,
    reason: string,
  ): void {
    this.decisions.write(
      decisionFields(attempt, { status, endpoint, subprotocol, reason }, this.credentialPrefixes),
    );
  }
}

/**
 * An upgrade to something other than WebSocket off our endpoints (curl's h2c on /health): answered
 * as the plain request it also is, the way Node answers when nobody listens for 'upgrade'.
 */
function serveAsHttp(server: Server, req: IncomingMessage, socket: Duplex): void {
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as Socket);
  res.once('finish', () => socket.end());
  server.emit('request', req, res);
}

/** Runs the rest of the chain for a request; resolves once its response has left (or its socket closed). */
function served(res: ServerResponse, next: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
    next();
  });
}
