import { type IncomingMessage } from 'node:http';
import { type ServerHttp2Stream } from 'node:http2';
import { type Duplex } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { type Accept, type EndpointSpec } from '#broker/handshake';
import { WebSocketServer } from 'ws';
import { watchCloseHandshake } from './close-after-handshake.js';
import { ConnectionOpener } from '../connections/connection-opener.js';
import { EndpointRegistry } from './endpoint-registry.js';
import { Http2WebSocketSocket } from '../http-front/http2-websocket-socket.js';
import { SubprotocolRegistry } from '../connections/subprotocol-registry.js';
import { uncorkAfterIo } from '../http-front/uncork-after-io.js';

/**
 * After an accepting decision: `ws` sees the request only now, on the module's own server, with
 * exactly the subprotocol and extension the decision chose, and the opener turns its socket into
 * the module's connection.
 */
@Injectable()
export class WsHandoff {
  /** One ws server per endpoint and module (keyed by objects: no key string is built per handshake). */
  private readonly servers = new Map<EndpointSpec, Map<string, WebSocketServer>>();

  constructor(
    private readonly endpoints: EndpointRegistry,
    private readonly subprotocols: SubprotocolRegistry,
    private readonly opener: ConnectionOpener,
  ) {}

  /**
   * Writes the 101 and opens the connection; `accepted` runs once ws made the WebSocket, before the
   * module's open. The decision's held slot goes back in every case.
   */
  accept(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    decision: Accept,
    remoteAddress: string,
    accepted: () => void,
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
        // ws calls back synchronously, and its socket listeners now do what the gateway's did.
        socket.removeListener('error', destroySocket);
        watchCloseHandshake(socket, ws);
        accepted();
        this.opener.open(ws, socket, decision, remoteAddress);
      });
    } finally {
      // The held slot goes back: the open connection now counts in the registry, or ws called back
      // never (it destroyed a socket that died on the way), or opening it failed.
      decision.release();
    }
  }

  /**
   * The same over an HTTP/2 stream (RFC 8441): ws takes the stream through a socket of its shape and
   * a request of the shape it checks (no key travels over HTTP/2: ws's accept value is computed from
   * a fixed one and never sent); its 101 head becomes the stream's 200.
   */
  acceptHttp2(
    stream: ServerHttp2Stream,
    decision: Accept,
    remoteAddress: string,
    encrypted: boolean,
    accepted: () => void,
  ): void {
    const socket = new Http2WebSocketSocket(stream, remoteAddress, encrypted);
    socket.on('error', destroySocket);
    const req = {
      method: 'GET',
      url: '/',
      headers: {
        upgrade: 'websocket',
        connection: 'Upgrade',
        'sec-websocket-version': '13',
        'sec-websocket-key': HTTP2_KEY,
      },
    } as unknown as IncomingMessage;
    this.accept(req, socket, EMPTY, decision, remoteAddress, accepted);
  }

  closeAll(): void {
    for (const byModule of this.servers.values()) for (const wss of byModule.values()) wss.close();
  }

  /** One ws server per endpoint and module: each has its own maxPayload and compression settings. */
  private serverFor(decision: Accept): WebSocketServer {
    let byModule = this.servers.get(decision.endpoint);
    if (byModule === undefined) this.servers.set(decision.endpoint, (byModule = new Map()));
    let wss = byModule.get(decision.module);
    if (wss === undefined) {
      const module = this.subprotocols.get(decision.module);
      const endpoint = this.endpoints.configOf(decision.endpoint);
      const deflate = endpoint.perMessageDeflate;
      wss = new WebSocketServer({
        noServer: true,
        clientTracking: false,
        // Pings are answered by WsConnection (see pinged).
        autoPong: false,
        maxPayload: endpoint.maxPayload ?? module?.options.maxPayload ?? 1024 * 1024,
        // The endpoint's setting, where it has one, replaces the module's (the decision negotiated the same).
        perMessageDeflate:
          deflate === undefined
            ? module?.options.perMessageDeflate || false
            : deflate === false
              ? false
              : {
                  ...decision.endpoint.deflate,
                  threshold: deflate.threshold,
                  zlibDeflateOptions: { memLevel: deflate.memLevel },
                },
      });
      byModule.set(decision.module, wss);
    }
    return wss;
  }
}

/** Nothing read ahead: an HTTP/2 stream's data starts after its headers. */
const EMPTY = Buffer.alloc(0);
/** RFC 6455's sample key: ws insists on one; over HTTP/2 its answer goes nowhere. */
const HTTP2_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/**
 * A socket's error listener until ws takes it over. Declared at module level, not as an arrow in
 * the 'upgrade' handler, whose closures share one context with the request: a listener left on a
 * socket refused with a slow close would keep the IncomingMessage (its headers, a token in its URL)
 * reachable.
 */
export function destroySocket(this: Duplex): void {
  this.destroy();
}
