import { type Duplex, type Writable } from 'node:stream';
import { type WebSocket } from 'ws';
import { closeFrameReceived, receiverOf } from './ws-internals.js';

/** The WebSocket an accepted socket carries, for closeAfterCloseHandshake. */
const WEBSOCKET = Symbol('websocket');

/** Two private fields of ws are read here (ws-internals.ts); either missing only loses the shortcut. */
type WatchedSocket = Duplex & { [WEBSOCKET]?: WebSocket };

/**
 * Called once ws has taken `socket` over: after the close handshake the broker closes the TCP
 * connection as soon as its own FIN is out (see closeAfterCloseHandshake).
 */
export function watchCloseHandshake(socket: Duplex, ws: WebSocket): void {
  (socket as WatchedSocket)[WEBSOCKET] = ws;
  socket.on('finish', closeAfterCloseHandshake);
}

/**
 * A socket's 'finish' listener once ws has it: ws ends its side of the TCP connection once the close
 * frames are exchanged (RFC 6455 section 7.1.1: the server closes first), then waits for the client's
 * FIN, up to its 30 s close timeout, before the connection counts as closed. Once the client's close
 * frame has arrived nothing more is data, so the socket is closed as soon as our FIN is out: a client
 * that never ends its side holds no slot, and the close costs a wake-up less (ws's handler of that FIN
 * also builds two ERR_STREAM_ALREADY_FINISHED errors). When ws ends the socket for another reason (a
 * frame over maxPayload, invalid UTF-8, a protocol error) the client has sent no close frame and may
 * still be sending: closing then, with its bytes unread, would reset the connection and could lose
 * our close frame and what was queued before it, so ws's own wait is kept. `_closeFrameReceived` is
 * private to ws: should it ever go away, every socket gets ws's wait again (safe), and the e2e test of
 * the half-closed client fails.
 */
function closeAfterCloseHandshake(this: WatchedSocket): void {
  const ws = this[WEBSOCKET];
  this[WEBSOCKET] = undefined;
  if (ws === undefined || !closeFrameReceived(ws)) return;
  quietReceiverEnd(ws);
  this.destroy();
}

/**
 * ws's receiver (a Writable) ends itself at the close frame, and ws's socket 'close' handler ends it
 * again. Ending a finished Writable does nothing but build an ERR_STREAM_ALREADY_FINISHED, with its
 * stack trace and formatted message, that nobody receives: that one error was a tenth of the server's
 * CPU per handshake (BENCHMARKS.md). So the finished receiver's `end` becomes the no-op it already is.
 * The spec checks ws still works this way.
 */
function quietReceiverEnd(ws: WebSocket): void {
  const receiver = receiverOf(ws);
  if (receiver?.writableFinished === true) receiver.end = endedAlready;
}

function endedAlready(this: Writable): Writable {
  return this;
}
