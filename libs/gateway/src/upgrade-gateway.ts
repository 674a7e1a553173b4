import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import { type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { Inject, Injectable } from '@nestjs/common';
import {
  decideHandshake,
  type Accept,
  type EndpointSpec,
  type HandshakeContext,
  type HandshakeDecision,
  type HandshakeRequest,
  type Reject,
} from '#broker/handshake';
import { opensEndpoint } from '#broker/auth';
import { type BrokerConfig } from '#broker/config';
import { type Logger } from 'pino';
import { WebSocketServer } from 'ws';
import { watchCloseHandshake } from './close-after-handshake.js';
import { ConnectionOpener } from './connection-opener.js';
import { ConnectionRegistry } from './connection-registry.js';
import { DecisionLog } from './decision-log.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { plainPage, problemBody, rejectionConnection, writeRejection } from './handshake-responses.js';
import { GatewayMetrics } from './metrics.js';
import { redactSubprotocols, redactUrl } from './redact.js';
import { SubprotocolRegistry } from './subprotocol-registry.js';
import { TokenVerifier } from './token-verifier.js';
import { BROKER_CONFIG, BROKER_LOGGER } from './tokens.js';
import { uncorkAfterIo } from './uncork-after-io.js';

/** One handshake attempt, as read off the request before anything rewrites it. */
interface Attempt {
  readonly started: number;
  readonly request: HandshakeRequest;
  /** The client's Sec-WebSocket-Protocol, as sent (Node joins repeated lines with ", "). */
  readonly offered: string | undefined;
}

/** Marks a socket whose request was refused, so that nothing pipelined behind it is served. */
const REFUSED = Symbol('refused');
/** The decision of the socket's latest request; the next one waits for it. */
const PENDING = Symbol('pending');
type MarkedSocket = Duplex & { [REFUSED]?: true; [PENDING]?: Promise<void> };

/** How long a module's own handshake check may take before the handshake fails with 503. */
const MODULE_CHECK_TIMEOUT_MS = 5000;

/**
 * The adapter between Node's HTTP server and the sans-IO handshake core: copies the request into
 * plain data, asks for a decision, writes the rejection or hands the socket to the module's own
 * `ws` server, and logs one line per decision.
 */
@Injectable()
export class UpgradeGateway {
  private context: HandshakeContext | null = null;
  /** One ws server per endpoint and module (keyed by objects: no key string is built per handshake). */
  private readonly servers = new Map<EndpointSpec, Map<string, WebSocketServer>>();
  private readonly credentialPrefixes: readonly string[];
  /** The one line per decision. */
  private readonly decisions: DecisionLog;

  constructor(
    @Inject(BROKER_CONFIG) private readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) private readonly logger: Logger,
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly connections: ConnectionRegistry,
    private readonly opener: ConnectionOpener,
    private readonly verifier: TokenVerifier,
    private readonly metrics: GatewayMetrics,
  ) {
    this.credentialPrefixes = [...new Set(config.endpoints.map((e) => e.auth.subprotocolPrefix))];
    this.decisions = new DecisionLog(logger);
  }

  attach(server: Server): void {
    this.context = {
      endpoints: this.endpoints.specs(),
      modules: this.subprotocols.specs(),
      limits: this.config.limits,
      counts: this.connections,
      hooks: {
        verifyToken: (token, carrier) => this.verifier.verify(token, carrier),
        authorize: (principal, endpoint) =>
          opensEndpoint(principal, endpoint.path)
            ? null
            : { title: 'Endpoint not allowed', detail: `This credential does not open ${endpoint.path}.` },
        checkModule: (name, ctx) => {
          const handler = this.subprotocols.get(name)?.handler;
          if (handler?.checkHandshake === undefined) return Promise.resolve(null);
          return withTimeout(
            handler.checkHandshake({
              endpoint: ctx.endpoint.path,
              params: ctx.params,
              principal: ctx.principal,
              secure: ctx.request.raw.secure,
              header: (name) => ctx.request.values(name.toLowerCase()),
            }),
          );
        },
      },
    };
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => this.onClientError(err, socket));
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      // Node hands the socket over without an error listener; a reset must not crash the process.
      socket.on('error', destroySocket);
      // Node parses nothing after an upgrade: no later request waits for this one.
      this.inOrder(socket, () => this.onUpgrade(server, req, socket, head), false);
    });
  }

  /** Express middleware, first in the chain: plain GETs on endpoint paths and upgrade attempts Node did not treat as upgrades. */
  readonly handleRequest = (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const socket = req.socket as MarkedSocket;
    this.inOrder(socket, async () => {
      const attempt = this.begin(req);
      const decision = await this.decide(attempt);
      if (decision === null || decision.kind === 'pass' || decision.kind === 'accept') {
        // An 'accept' cannot happen here: Node emits 'upgrade' whenever both headers are present.
        return next();
      }
      if (decision.kind === 'plain') {
        this.metrics.plainRequests.inc({ endpoint: decision.endpoint.path });
        this.logDecision(attempt, 200, decision.endpoint.path, null, 'upgrade headers missing');
        const page = plainPage(decision.endpoint, decision.acceptsHtml);
        res.writeHead(200, { 'Content-Type': page.type, 'Cache-Control': 'no-store' }).end(page.body);
        return;
      }
      socket[REFUSED] = true;
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
    });
  };

  /**
   * Decides the requests of one socket one after the other, and none after a refusal: a request
   * pipelined behind a refused one is never served, even when Node parsed it while the first
   * decision was still waiting on a signature. `mayBeFollowed` is false for an upgrade, after which
   * Node parses nothing on the socket.
   */
  private inOrder(socket: MarkedSocket, work: () => Promise<void>, mayBeFollowed = true): void {
    const run = (): Promise<void> => {
      if (socket[REFUSED]) {
        socket.destroy();
        return Promise.resolve();
      }
      return work();
    };
    const prior = socket[PENDING];
    const done = (prior ? prior.then(run) : run()).catch((err: Error) => this.failed(err, socket));
    // Kept only where a later request may wait for it: an upgrade's socket carries no promise.
    if (mayBeFollowed) socket[PENDING] = done;
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
    const [status, title] =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request header fields too large']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request timeout']
          : [400, 'Malformed HTTP request'];
    this.metrics.handshakes.inc({ outcome: 'rejected', status: String(status), endpoint: '' });
    const detail =
      status === 431
        ? `The request head exceeds ${this.config.http.maxHeaderSize} bytes.`
        : 'The request could not be parsed.';
    writeRejection(socket, {
      kind: 'reject',
      status,
      headers: {},
      problem: { title, detail },
      endpoint: null,
    });
  }

  closeAll(): void {
    for (const byModule of this.servers.values()) for (const wss of byModule.values()) wss.close();
  }

  private async onUpgrade(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const attempt = this.begin(req);
    let decision: HandshakeDecision | null;
    try {
      decision = await this.decide(attempt);
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'handshake decision failed');
      decision = null;
    }
    if (decision?.kind === 'pass') return serveAsHttp(server, req, socket);
    if (decision === null || decision.kind === 'plain') {
      const fallback = { kind: 'reject', status: 500, headers: {}, endpoint: null } as const;
      decision = {
        ...fallback,
        problem: { title: 'Internal error', detail: 'The handshake could not be decided.' },
      };
    }
    if (decision.kind === 'reject') {
      (socket as MarkedSocket)[REFUSED] = true;
      this.refused(attempt, decision);
      writeRejection(socket, decision);
      return;
    }
    if (socket.destroyed) {
      decision.release();
      this.logDecision(attempt, 0, decision.endpoint.path, null, 'client went away during the handshake');
      return;
    }
    this.accept(attempt, req, socket, head, decision);
  }

  private accept(
    attempt: Attempt,
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    decision: Accept,
  ): void {
    // ws re-reads these headers: hand it exactly what was decided, so it cannot choose differently.
    if (decision.protocol === null) delete req.headers['sec-websocket-protocol'];
    else req.headers['sec-websocket-protocol'] = decision.protocol;
    if (decision.deflate === null) delete req.headers['sec-websocket-extensions'];
    else req.headers['sec-websocket-extensions'] = decision.deflate.offer;

    // The 101 and what the module sends on open (a welcome, a CONNACK) leave in one write, not two.
    socket.cork();
    uncorkAfterIo(socket);
    try {
      this.serverFor(decision).handleUpgrade(req, socket, head, (ws) => {
        // ws calls back synchronously, and its socket listeners now do what this one did.
        socket.removeListener('error', destroySocket);
        watchCloseHandshake(socket, ws);
        this.logDecision(
          attempt,
          101,
          decision.endpoint.path,
          decision.protocol ?? decision.module,
          'accepted',
        );
        this.opener.open(ws, socket, decision, attempt.request.remoteAddress);
      });
    } finally {
      // The held slot goes back: the open connection now counts in the registry, or ws called back
      // never (it destroyed a socket that died on the way), or opening it failed.
      decision.release();
    }
  }

  /** Reads what the decision and the log line need off the request, once (remoteAddress is a syscall). */
  private begin(req: IncomingMessage): Attempt {
    return {
      started: performance.now(),
      offered: req.headers['sec-websocket-protocol'],
      request: {
        method: req.method ?? '',
        httpVersion: req.httpVersion,
        url: req.url ?? '/',
        rawHeaders: req.rawHeaders,
        remoteAddress: req.socket.remoteAddress ?? '',
        secure: req.socket instanceof TLSSocket,
      },
    };
  }

  private decide(attempt: Attempt): Promise<HandshakeDecision | null> {
    if (this.context === null) return Promise.resolve(null);
    return decideHandshake(attempt.request, this.context);
  }

  /** One ws server per endpoint and module: each has its own maxPayload and compression settings. */
  private serverFor(decision: Accept): WebSocketServer {
    let byModule = this.servers.get(decision.endpoint);
    if (byModule === undefined) this.servers.set(decision.endpoint, (byModule = new Map()));
    let wss = byModule.get(decision.module);
    if (wss === undefined) {
      const module = this.subprotocols.get(decision.module);
      const endpoint = this.endpoints.configOf(decision.endpoint);
      wss = new WebSocketServer({
        noServer: true,
        clientTracking: false,
        maxPayload: endpoint.maxPayload ?? module?.options.maxPayload ?? 1024 * 1024,
        perMessageDeflate: module?.options.perMessageDeflate || false,
      });
      byModule.set(decision.module, wss);
    }
    return wss;
  }

  private refused(attempt: Attempt, decision: Reject): void {
    const endpoint = decision.endpoint?.path ?? null;
    this.metrics.handshakes.inc({
      outcome: 'rejected',
      status: String(decision.status),
      endpoint: endpoint ?? '',
    });
    this.logDecision(attempt, decision.status, endpoint, null, decision.problem.title);
  }

  private logDecision(
    attempt: Attempt,
    status: number,
    endpoint: string | null,
    subprotocol: string | null,
    reason: string,
  ): void {
    this.decisions.write({
      status,
      endpoint,
      subprotocol,
      reason,
      path: redactUrl(attempt.request.url),
      offered: attempt.offered && redactSubprotocols([attempt.offered], this.credentialPrefixes),
      client: attempt.request.remoteAddress,
      durationMs: Math.round((performance.now() - attempt.started) * 1000) / 1000,
    });
  }
}

/**
 * A socket's error listener until ws takes it over. Declared here, not as an arrow in the 'upgrade'
 * handler, whose closures share one context with the request: a listener left on a socket refused
 * with a slow close would keep the IncomingMessage (its headers, a token in its URL) reachable.
 */
function destroySocket(this: Duplex): void {
  this.destroy();
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

function withTimeout<T>(promise: Promise<T>): Promise<T | { status: number; title: string; detail: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ status: number; title: string; detail: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ status: 503, title: 'Handshake check timed out', detail: 'Try again later.' }),
      MODULE_CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
