import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { constants, type IncomingHttpHeaders as Http2Headers, type ServerHttp2Stream } from 'node:http2';
import { Duplex } from 'node:stream';

/** Headers HTTP/2 forbids in a response (RFC 9113 section 8.2.2); Node would refuse the whole response. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** Who sent the HTTP/2 request, as the HTTP/1.1 side will see it on its socket. */
export interface BridgedPeer {
  readonly remoteAddress: string;
  readonly encrypted: boolean;
}

/**
 * An ordinary request that arrived over HTTP/2 (the admin API, probes, metrics, the plain page of an
 * endpoint), answered by the application's own HTTP/1.1 handler, in process: the request is written
 * to that handler over an in-memory socket pair with Node's HTTP client, and the response goes back
 * on the stream. Express cannot take Node's HTTP/2 compatibility objects (it swaps their prototypes
 * for IncomingMessage's), and a loopback TCP hop would make every client look local. Written here
 * because no maintained package does this for a Node HTTP/1.1 handler.
 */
export function bridgeToHttp1(
  connectionListener: (socket: Duplex) => void,
  stream: ServerHttp2Stream,
  headers: Http2Headers,
  peer: BridgedPeer,
): void {
  const [server, client] = socketPair(peer);
  connectionListener(server);
  const forwarded: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (name[0] !== ':') forwarded[name] = value;
  forwarded.host ??= headers[':authority'];
  const req = request({
    method: headers[':method'],
    path: headers[':path'],
    headers: forwarded as OutgoingHttpHeaders,
    createConnection: () => client as never,
  });
  req.on('response', (res) => {
    const out: Record<string, string | string[] | number> = { ':status': res.statusCode ?? 502 };
    for (const [name, value] of Object.entries(res.headers))
      if (value !== undefined && !CONNECTION_SPECIFIC.has(name)) out[name] = value;
    if (stream.destroyed) return res.destroy();
    stream.respond(out);
    res.pipe(stream);
  });
  const fail = () => {
    if (!stream.destroyed) stream.close(constants.NGHTTP2_INTERNAL_ERROR);
    server.destroy();
  };
  req.on('error', fail);
  stream.on('error', () => req.destroy());
  // Done or reset: the request and its socket pair go (after a whole response, destroying them is a no-op).
  stream.once('close', () => req.destroy());
  stream.pipe(req);
}

/** Two connected in-memory sockets; the server's end carries the HTTP/2 client's address. */
function socketPair(peer: BridgedPeer): [Duplex, Duplex] {
  let server: Duplex | null = null;
  let client: Duplex | null = null;
  const end = (other: () => Duplex | null) =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        other()?.push(chunk);
        callback();
      },
      final(callback) {
        other()?.push(null);
        callback();
      },
      destroy(err, callback) {
        const o = other();
        if (o !== null && !o.destroyed) o.destroy();
        callback(err);
      },
    });
  server = end(() => client);
  client = end(() => server);
  Object.assign(server, {
    remoteAddress: peer.remoteAddress,
    encrypted: peer.encrypted,
    setNoDelay() {},
    setKeepAlive() {},
  });
  return [server, client];
}
