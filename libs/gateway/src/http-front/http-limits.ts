import { type IncomingMessage, type Server } from 'node:http';
import { type Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import { type BrokerConfig } from '#broker/config';
import proxyaddr from 'proxy-addr';
import { refuseAtAccept } from './node-internals.js';

/**
 * Sets the header size limit (431) and the slowloris timeouts on whichever HTTP server the
 * application created (NestFactory.create makes a bare one). Node reads `maxHeaderSize` for each new
 * connection and the timeouts at each check, and starts the checks on 'listening', so setting them
 * after creation and before listen is as good as passing them to createServer. A connection from an
 * address that `refusesAtAccept` (one flooding handshakes far past its rate) is closed as it arrives;
 * `refused` counts each connection closed so, and each closed at its address's share of silent sockets.
 */
export function applyHttpLimits(
  server: Server,
  config: BrokerConfig,
  refusesAtAccept: (address: string) => boolean,
  refused: () => void = () => undefined,
): void {
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
  // Node's head timeout starts with the first byte: a connection that never sends one would stay
  // for ever. It gets the same time to send its first request; once a request or upgrade arrives,
  // the timer goes (a slow response of the application's is not cut; keep-alive idling is Node's).
  const accepted = server instanceof TlsServer ? 'secureConnection' : 'connection';
  const silent: SilentSockets = { all: new Set(), byAddress: new Map() };
  silentSockets.set(server, silent);
  const perAddress = config.limits.maxConnectionsPerAddress;
  // A trusted proxy's connections carry many clients: its address has no share of its own.
  const trusted = http.trustedProxies.length === 0 ? null : proxyaddr.compile([...http.trustedProxies]);
  const untrusted = (address: string): boolean => trusted === null || !trusted(address, 0);
  // Before Node makes a Socket: an address flooding handshakes, or at its share of silent sockets,
  // costs an accept and a close per connect. The listeners below check the same where that hook is not.
  refuseAtAccept(server, (address) => {
    const refuse =
      untrusted(address) && (refusesAtAccept(address) || (silent.byAddress.get(address) ?? 0) >= perAddress);
    if (refuse) refused();
    return refuse;
  });
  // Before TLS and before the HTTP parser reads a byte: a flood of handshakes costs an accept each.
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    if (refusesAtAccept(address) && untrusted(address)) {
      refused();
      socket.destroy();
    }
  });
  server.on(accepted, (socket: Socket) => {
    if (socket.destroyed) return;
    // Each address gets its share of the sockets that have not spoken yet: one client's idle connects
    // cannot take the room every other address needs (the headroom below is shared by all).
    const address = socket.remoteAddress ?? '';
    const count = (silent.byAddress.get(address) ?? 0) + 1;
    if (count > perAddress && untrusted(address)) {
      refused();
      socket.destroy();
      return;
    }
    silent.byAddress.set(address, count);
    // A timer of its own, not socket.setTimeout: Node's listener for that destroys the socket
    // before its own head timeout could answer 408 to a client that did send part of a request.
    const timed = socket as SilenceTimed;
    timed[SILENCE] = setTimeout(destroyIfSilent, http.headersTimeoutMs, socket).unref();
    timed[SILENT_SET] = silent;
    timed[SILENT_ADDRESS] = address;
    silent.all.add(socket);
    socket.once('close', forget);
  });
  if (server instanceof TlsServer) {
    // Before TLS: a connection that never sends its ClientHello would wait for TLS's own handshake
    // timeout (120 s). One that sends it and stalls is TLS's business.
    server.on('connection', (socket: Socket) => {
      setTimeout(destroyIfSilent, http.headersTimeoutMs, socket).unref();
    });
  }
  server.prependListener('request', spoke);
  server.prependListener('upgrade', spoke);
  // Every socket counts, not only WebSockets: a flood of idle connects cannot take every descriptor.
  server.maxConnections = config.limits.maxConnections + RAW_SOCKET_HEADROOM;
}

/** Sockets beyond the WebSocket limit: handshakes being decided, admin and probe requests. */
export const RAW_SOCKET_HEADROOM = 1024;

/** A server's connections that have not sent a request yet (Node counts them neither idle nor busy). */
interface SilentSockets {
  readonly all: Set<Socket>;
  /** How many of them each client address has. */
  readonly byAddress: Map<string, number>;
}

const silentSockets = new WeakMap<Server, SilentSockets>();

/** At shutdown: the connections that never sent a request go at once. */
export function closeSilentSockets(server: Server): void {
  for (const socket of silentSockets.get(server)?.all ?? []) socket.destroy();
}

const SILENCE = Symbol('silence');
const SILENT_SET = Symbol('silent set');
const SILENT_ADDRESS = Symbol('silent address');
type SilenceTimed = Socket & {
  [SILENCE]?: NodeJS.Timeout | undefined;
  [SILENT_SET]?: SilentSockets | undefined;
  [SILENT_ADDRESS]?: string | undefined;
};

/** The socket spoke or closed: its timer and its place among the silent ones (and its address's) go. */
function forget(this: SilenceTimed): void {
  clearTimeout(this[SILENCE]);
  const silent = this[SILENT_SET];
  if (silent !== undefined && silent.all.delete(this)) {
    const address = this[SILENT_ADDRESS] ?? '';
    const count = (silent.byAddress.get(address) ?? 1) - 1;
    if (count > 0) silent.byAddress.set(address, count);
    else silent.byAddress.delete(address);
  }
  this[SILENCE] = undefined;
  this[SILENT_SET] = undefined;
  this[SILENT_ADDRESS] = undefined;
}

/** Shared (no closure per connection): a socket that sent nothing goes; one that sent part of a head gets Node's 408. */
function destroyIfSilent(socket: Socket): void {
  if (socket.bytesRead === 0) socket.destroy();
}

function spoke(req: IncomingMessage): void {
  const socket = req.socket as SilenceTimed;
  if (socket[SILENT_SET] === undefined) return;
  forget.call(socket);
  socket.removeListener('close', forget);
}
