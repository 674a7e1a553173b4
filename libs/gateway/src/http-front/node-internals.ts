import { IncomingMessage, type Server as HttpServer, ServerResponse } from 'node:http';
import { type Server, type Socket } from 'node:net';
import { type TLSSocket } from 'node:tls';

/**
 * The private parts of Node's own modules the broker reads, in one place; node-internals.spec.ts
 * checks them on real sockets and fails loudly when a Node upgrade moves them.
 */

/** The TCP socket a server-side TLS socket wraps (`_parent`, there since Node 0.11). */
export function tcpSocketUnder(socket: TLSSocket): Socket | undefined {
  return (socket as TLSSocket & { _parent?: Socket })._parent;
}

/** What a listening server's handle looks like inside Node (`_handle.onconnection`, since Node 0.x). */
interface ListenHandle {
  onconnection?: (err: number, client?: ClientHandle) => void;
}
interface ClientHandle {
  getpeername?: (out: { address?: string }) => number;
  close(): void;
}

/**
 * Refuses a connection at accept, before Node makes a Socket of it: `refuse(address)` true closes the
 * accepted handle at once. A flood of connects that would each be destroyed at 'connection' cost a
 * Socket, its stream states and a destroy each (about 60 µs, half of the loop under 7,000 a second);
 * this costs a getpeername and a close. Installed once the server listens; where Node's handle is not
 * as expected, nothing is installed, and the caller's own 'connection' check is the only one.
 */
export function refuseAtAccept(server: Server, refuse: (address: string) => boolean): void {
  const install = (): void => {
    const handle = (server as Server & { _handle?: ListenHandle | null })._handle;
    const accept = handle?.onconnection;
    if (handle === null || handle === undefined || typeof accept !== 'function') return;
    const peer: { address?: string } = {};
    handle.onconnection = function (this: ListenHandle, err: number, client?: ClientHandle): void {
      peer.address = undefined;
      if (err === 0 && client?.getpeername?.(peer) === 0 && refuse(peer.address ?? '')) {
        client.close();
        return;
      }
      accept.call(this, err, client);
    };
  };
  if (server.listening) install();
  else server.once('listening', install);
}

/**
 * Makes an HTTP server construct each request and response with these prototypes, as its
 * `IncomingMessage` and `ServerResponse` options would (kept under symbols of those names since Node
 * 9.6). Express gives every request and response its own prototypes (`app.request`, `app.response`)
 * with `Object.setPrototypeOf`: on objects Node made, that changes their shape each time, and V8's
 * caches for them miss all through Node's and Express's code (bare Express answering pipelined GETs
 * here: 131 to 138 µs of CPU per request, 16 µs without the change). Objects born with it are left
 * as they are. Returns false, changing nothing, where the server does not hold the options as
 * expected (the requests are then as Node makes them: correct, only slower).
 */
export function constructRequestsWith(
  server: HttpServer,
  request: IncomingMessage,
  response: ServerResponse,
): boolean {
  const symbols = Object.getOwnPropertySymbols(server);
  const incoming = symbols.find((symbol) => symbol.description === 'IncomingMessage');
  const outgoing = symbols.find((symbol) => symbol.description === 'ServerResponse');
  const held = server as unknown as Record<symbol, unknown>;
  if (incoming === undefined || outgoing === undefined) return false;
  if (held[incoming] !== IncomingMessage || held[outgoing] !== ServerResponse) return false;
  const makeRequest = bornWith(IncomingMessage, request);
  const makeResponse = bornWith(ServerResponse, response);
  if (makeRequest === null || makeResponse === null) return false;
  held[incoming] = makeRequest;
  held[outgoing] = makeResponse;
  return true;
}

/**
 * A constructor whose objects have `prototype` itself as their prototype, made by `base` as a plain
 * function (`base.call(this)`, as Node's own http classes inherit): the object is allocated once, from
 * this constructor's own initial map, so its shape is shared by every request. (Reflect.construct with
 * this as new.target would allocate twice and make a fresh map for each request.) Null where `base`
 * is a class, which cannot be called so.
 */
function bornWith(base: typeof IncomingMessage | typeof ServerResponse, prototype: object): unknown {
  if (Function.prototype.toString.call(base).startsWith('class')) return null;
  function Born(this: object, ...args: unknown[]): void {
    Reflect.apply(base, this, args);
  }
  Born.prototype = prototype;
  return Born;
}
