import { type Duplex } from 'node:stream';

/** Marks a socket whose request was refused, so that nothing pipelined behind it is served. */
const REFUSED = Symbol('refused');
/** The decision of the socket's latest request; the next one waits for it. */
const PENDING = Symbol('pending');
/** How many of the socket's requests are waiting or running. */
const WAITING = Symbol('waiting');
type MarkedSocket = Duplex & { [REFUSED]?: true; [PENDING]?: Promise<void>; [WAITING]?: number };

/**
 * Requests one connection may have waiting for their turn. Browsers do not pipeline, and the clients
 * that do keep a few in flight; each waiting one holds its request and response objects, so an
 * unbounded queue let one connection take memory and keep the loop busy for everyone.
 */
export const MAX_WAITING_REQUESTS = 32;

/**
 * Decides the requests of one socket one after the other, and none after a refusal: a request
 * pipelined behind a refused one is never served, even when Node parsed it while the first
 * decision was still waiting on a signature. A connection with more than `MAX_WAITING_REQUESTS`
 * waiting is closed at once, unanswered (a response cannot overtake the ones before it). The marks
 * live on the socket itself (symbols), so nothing outlives it.
 */
export class SocketOrder {
  constructor(
    private readonly failed: (err: Error, socket: Duplex) => void,
    private readonly overflowed: (socket: Duplex) => void = () => undefined,
  ) {}

  /** `mayBeFollowed` is false for an upgrade, after which Node parses nothing on the socket. */
  run(socket: Duplex, work: () => Promise<void>, mayBeFollowed = true): void {
    const marked = socket as MarkedSocket;
    const waiting = (marked[WAITING] ?? 0) + 1;
    if (waiting > MAX_WAITING_REQUESTS) {
      marked[REFUSED] = true;
      socket.destroy();
      this.overflowed(socket);
      return;
    }
    marked[WAITING] = waiting;
    const run = (): Promise<void> => {
      if (marked[REFUSED]) {
        socket.destroy();
        return Promise.resolve();
      }
      return work();
    };
    const prior = marked[PENDING];
    // A request pipelined behind another waits for a turn of the loop too: the other sockets' events go
    // first, so one connection's queue of cheap requests cannot hold the loop for all of them at once.
    const done = (prior ? prior.then(nextTurn).then(run) : run())
      .catch((err: Error) => this.failed(err, socket))
      .finally(() => (marked[WAITING] = (marked[WAITING] ?? 1) - 1));
    // Kept only where a later request may wait for it: an upgrade's socket carries no promise.
    if (mayBeFollowed) marked[PENDING] = done;
  }

  /** Nothing after this socket's current request is served. */
  refuse(socket: Duplex): void {
    (socket as MarkedSocket)[REFUSED] = true;
  }
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
