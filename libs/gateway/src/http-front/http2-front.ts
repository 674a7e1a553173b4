import { type Server } from 'node:http';
import {
  constants,
  createServer,
  type Http2Session,
  type IncomingHttpHeaders,
  type ServerHttp2Stream,
} from 'node:http2';
import { type Socket } from 'node:net';
import { type Duplex } from 'node:stream';
import { Server as TlsServer, type TLSSocket } from 'node:tls';
import { type ClientCertificate, type HandshakeRequest, type Reject } from '#broker/handshake';
import { respondRejection } from '../upgrade/handshake-responses.js';
import { type ClientOrigin } from './forwarded.js';
import { bridgeToHttp1, type BridgedPeer } from './http2-bridge.js';

/** The client preface of HTTP/2 with prior knowledge (RFC 9113 section 3.4); no HTTP/1.1 method is PRI. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');

export interface Http2Options {
  /** Streams one connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). */
  readonly maxStreams: number;
  /** A connection with no open stream and no frame for this long is closed (GOAWAY). */
  readonly idleTimeoutMs: number;
  /** A stream's header block may be this large (SETTINGS_MAX_HEADER_LIST_SIZE): HTTP/1.1's head limit. */
  readonly maxHeaderBytes: number;
  /** An ordinary request must have arrived whole (END_STREAM) this long after its headers: HTTP/1.1's limit. */
  readonly requestTimeoutMs: number;
  /** An extended CONNECT (RFC 8441): the WebSocket handshake's business. */
  readonly connect: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, peer: BridgedPeer) => void;
  /** A connection from `address` was closed for resetting streams in a flood (rapid reset). */
  readonly flooded: (address: string) => void;
}

/** Streams a connection may reset before they are served, at once, and again each second after that. */
const EARLY_RESETS = 100;
const EARLY_RESETS_PER_SECOND = 10;

/**
 * HTTP/2 on the application's own listener, beside HTTP/1.1: with TLS, connections whose ALPN chose
 * h2; in cleartext, connections that open with the prior-knowledge preface (h2c). Node's http2
 * server runs the sessions; it advertises SETTINGS_ENABLE_CONNECT_PROTOCOL, so an extended CONNECT
 * with `:protocol` opens a WebSocket on its stream, and every other request is answered by the
 * application's HTTP/1.1 handler through the bridge. Each connection is still one socket of the
 * listener (its maxConnections counts it).
 */
export class Http2Front {
  /** Each connection, with how many streams it has open. */
  private readonly sessions = new Map<Http2Session, number>();
  /** Streams each connection's client reset before they were served, decaying at a steady rate. */
  private readonly earlyResets = new WeakMap<Http2Session, { count: number; at: number }>();

  private constructor(
    private readonly http1: (socket: Duplex) => void,
    private readonly options: Http2Options,
  ) {}

  /** Takes over the listener's HTTP/1.1 connection handler: h2 connections go to HTTP/2, the rest stay. */
  static attach(server: Server, options: Http2Options): Http2Front {
    const tls = server instanceof TlsServer;
    const event = tls ? 'secureConnection' : 'connection';
    // Node's HTTP handler is the one the server's constructor registered: the first.
    const [http1] = server.listeners(event) as ((socket: Duplex) => void)[];
    if (http1 === undefined) throw new Error('http2: the HTTP server has no connection handler');
    if (tls && !alpnOffersH2(server)) {
      throw new Error(
        'http.http2: the TLS server does not offer h2 in ALPN: pass ' +
          '`httpsOptions: brokerHttpsOptions(config.tls, config.http)` to NestFactory.create (startBroker does this)',
      );
    }
    const front = new Http2Front((socket) => http1.call(server, socket), options);
    const h2 = front.server();
    server.removeListener(event, http1);
    server.on(event, (socket: Socket) => {
      if (tls) {
        if ((socket as TLSSocket).alpnProtocol === 'h2') h2.emit('connection', socket);
        else front.http1(socket);
      } else {
        front.sniff(socket, h2);
      }
    });
    return front;
  }

  /** GOAWAY to every connection (their streams finish), then, after `graceMs`, whatever is left goes. */
  close(graceMs: number): void {
    for (const session of this.sessions.keys()) session.close();
    setTimeout(() => {
      for (const session of this.sessions.keys()) session.destroy();
    }, graceMs).unref();
  }

  private server() {
    const h2 = createServer({
      settings: {
        enableConnectProtocol: true,
        maxConcurrentStreams: this.options.maxStreams,
        // A larger block resets its stream (ENHANCE_YOUR_CALM); the connection stays.
        maxHeaderListSize: this.options.maxHeaderBytes,
      },
    });
    h2.on('session', (session: Http2Session) => {
      this.sessions.set(session, 0);
      session.once('close', () => this.sessions.delete(session));
      // One listener for the connection's life: armIdle only restarts the timer.
      session.on('timeout', () => {
        // Open WebSockets have their own pings; an idle connection with none goes.
        if (this.sessions.get(session) === 0) session.close();
      });
      this.armIdle(session);
    });
    h2.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
      stream.on('error', () => stream.destroy());
      const session = stream.session;
      if (session !== undefined) {
        this.sessions.set(session, (this.sessions.get(session) ?? 0) + 1);
        stream.once('close', () => {
          const open = this.sessions.get(session);
          if (open === undefined) return;
          this.sessions.set(session, open - 1);
          // The idle time runs again from the last stream's end (Node's fires once per quiet spell).
          if (open === 1) this.armIdle(session);
        });
      }
      const socket = session?.socket;
      const peer: BridgedPeer = {
        remoteAddress: socket?.remoteAddress ?? '',
        encrypted: (socket as TLSSocket | undefined)?.encrypted === true,
      };
      // Served from the next turn: a stream its client reset at once (rapid reset, CVE-2023-44487) is
      // gone by then, and costs no request, no handshake decision and no bridge.
      setImmediate(() => {
        if (stream.destroyed || stream.closed) return this.resetEarly(session);
        if (headers[':method'] === 'CONNECT' && headers[':protocol'] !== undefined)
          return this.options.connect(stream, headers, peer);
        if (headers[':method'] === 'CONNECT') return this.refuse(stream, TUNNEL);
        this.bound(stream);
        bridgeToHttp1(this.http1, stream, headers, peer);
      });
    });
    return h2;
  }

  /**
   * A stream reset by its client before it was served. A connection that does this more than
   * EARLY_RESETS times, past the rate those refill at, is flooding (rapid reset): GOAWAY
   * ENHANCE_YOUR_CALM, and it is closed, as nghttp2's own stream reset limit does.
   */
  private resetEarly(session: Http2Session | undefined): void {
    if (session === undefined || session.destroyed) return;
    const now = performance.now();
    const resets = this.earlyResets.get(session) ?? { count: 0, at: now };
    resets.count = Math.max(0, resets.count - ((now - resets.at) / 1000) * EARLY_RESETS_PER_SECOND) + 1;
    resets.at = now;
    this.earlyResets.set(session, resets);
    if (resets.count <= EARLY_RESETS) return;
    const address = session.socket?.remoteAddress;
    session.goaway(constants.NGHTTP2_ENHANCE_YOUR_CALM);
    session.destroy();
    // Its next connections are refused at accept for a while: a new one after each GOAWAY is the attack.
    if (address !== undefined) this.options.flooded(address);
  }

  /**
   * A connection with no stream open and no frame for `idleTimeoutMs` is closed (GOAWAY). No callback
   * here: Node adds one as a 'timeout' listener at each call, and a connection going idle after each of
   * its requests piled them up (MaxListenersExceededWarning, all run at the timeout).
   */
  private armIdle(session: Http2Session): void {
    session.setTimeout(this.options.idleTimeoutMs);
  }

  /** A refusal on the stream; the client may still be sending: it is told to stop (RST_STREAM NO_ERROR). */
  private refuse(stream: ServerHttp2Stream, reject: Reject): void {
    stopAfterResponse(stream);
    respondRejection(stream, reject);
  }

  /**
   * An ordinary request's stream ends: once its response went out (a request still being sent is told
   * to stop, as RFC 9113 section 8.1 allows), and at the latest `requestTimeoutMs` after its headers when
   * the request has not arrived whole by then (408 if nothing was answered yet). Without this, a stream
   * that never sends END_STREAM held its connection open for good.
   */
  private bound(stream: ServerHttp2Stream): void {
    stopAfterResponse(stream);
    const { requestTimeoutMs } = this.options;
    const timer = setTimeout(() => {
      if (stream.closed || stream.destroyed) return;
      if (stream.headersSent) return stream.close(constants.NGHTTP2_CANCEL);
      respondRejection(stream, {
        kind: 'reject',
        status: 408,
        headers: {},
        problem: {
          title: 'Request timeout',
          detail: `The request did not arrive whole within ${requestTimeoutMs} ms.`,
        },
        endpoint: null,
      });
    }, requestTimeoutMs);
    timer.unref();
    stream.once('end', () => clearTimeout(timer));
    stream.once('close', () => clearTimeout(timer));
  }

  /** Cleartext: the first bytes say HTTP/2 (the preface) or HTTP/1.1 (anything else). */
  private sniff(socket: Socket, h2: ReturnType<typeof createServer>): void {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const n = Math.min(buffered.length, PREFACE.length);
      const h2Preface = buffered.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (h2Preface && buffered.length < PREFACE.length) return;
      socket.removeListener('data', onData);
      socket.pause();
      socket.unshift(buffered);
      if (h2Preface) {
        // Node's session reads what is buffered on the paused socket itself (on its next tick).
        h2.emit('connection', socket);
      } else {
        this.http1(socket);
        socket.resume();
      }
    };
    socket.on('data', onData);
  }
}

/** CONNECT without `:protocol` asks for a tunnel: this server is no proxy. */
const TUNNEL: Reject = {
  kind: 'reject',
  status: 405,
  headers: {},
  problem: {
    title: 'Method not allowed',
    detail:
      'CONNECT without :protocol asks for a tunnel, and this server is not a proxy; a WebSocket is an ' +
      'extended CONNECT with :protocol websocket (RFC 8441).',
  },
  endpoint: null,
};

/** Once the stream's response is all written, a request still arriving is told to stop (RST_STREAM NO_ERROR). */
function stopAfterResponse(stream: ServerHttp2Stream): void {
  stream.once('finish', () => {
    if (!stream.closed && !stream.destroyed && !stream.readableEnded)
      stream.close(constants.NGHTTP2_NO_ERROR);
  });
}

/**
 * Whether the TLS server's ALPN list (kept by Node in wire form, length-prefixed, on the server
 * object) names h2. The list is set only at creation: a server made without it never chooses h2.
 */
function alpnOffersH2(server: TlsServer): boolean {
  const list = (server as TlsServer & { ALPNProtocols?: Buffer }).ALPNProtocols;
  return Buffer.isBuffer(list) && list.includes(H2_IN_ALPN);
}

const H2_IN_ALPN = Buffer.from([2, 0x68, 0x32]);

/**
 * An extended CONNECT as the handshake core reads requests: `:authority` as the Host (a separate
 * host header, which HTTP/2 allows, is then not a second one), the other pseudo-headers as method,
 * path and `protocol`.
 */
export function extendedConnectRequest(
  headers: IncomingHttpHeaders,
  client: ClientOrigin,
  clientCertificate: ClientCertificate | undefined,
): HandshakeRequest {
  const authority = headers[':authority'];
  const rawHeaders: string[] = authority === undefined ? [] : ['host', authority];
  for (const [name, value] of Object.entries(headers)) {
    if (name[0] === ':' || value === undefined || (name === 'host' && authority !== undefined)) continue;
    for (const v of Array.isArray(value) ? value : [value]) rawHeaders.push(name, v);
  }
  return {
    method: headers[':method'] ?? '',
    httpVersion: '2.0',
    url: headers[':path'] ?? '/',
    rawHeaders,
    remoteAddress: client.address,
    secure: client.secure,
    forwardedHost: client.host,
    protocol: headers[':protocol'] as string | undefined,
    clientCertificate,
  };
}
