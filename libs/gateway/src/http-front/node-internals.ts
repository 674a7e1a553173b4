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
