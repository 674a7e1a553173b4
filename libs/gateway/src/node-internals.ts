import { type Socket } from 'node:net';
import { type TLSSocket } from 'node:tls';

/**
 * The private parts of Node's own modules the broker reads, in one place; node-internals.spec.ts
 * checks them on real sockets and fails loudly when a Node upgrade moves them.
 */

/** The TCP socket a server-side TLS socket wraps (`_parent`, there since Node 0.11). */
export function tcpSocketUnder(socket: TLSSocket): Socket | undefined {
  return (socket as TLSSocket & { _parent?: Socket })._parent;
}
