import { type Writable } from 'node:stream';
import { type WebSocket } from 'ws';

/**
 * The private parts of ws (8.x) the broker reads, in one place; ws-internals.spec.ts checks them on a
 * real connection and fails loudly when an upgrade of ws moves them. Each use degrades safely when
 * one is missing (see close-after-handshake.ts).
 */
type WsInternals = WebSocket & { _closeFrameReceived?: boolean; _receiver?: Writable };

/** Whether the peer's close frame has arrived (ws's `_closeFrameReceived`). */
export function closeFrameReceived(ws: WebSocket): boolean {
  return (ws as WsInternals)._closeFrameReceived === true;
}

/** ws's frame parser, a Writable the socket's data is piped into (ws's `_receiver`). */
export function receiverOf(ws: WebSocket): Writable | undefined {
  return (ws as WsInternals)._receiver;
}
