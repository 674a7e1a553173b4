import { type Duplex } from 'node:stream';

/** Marks a socket whose request was refused, so that nothing pipelined behind it is served. */
const REFUSED = Symbol('refused');
/** The decision of the socket's latest request; the next one waits for it. */
const PENDING = Symbol('pending');
type MarkedSocket = Duplex & { [REFUSED]?: true; [PENDING]?: Promise<void> };

/**
 * Decides the requests of one socket one after the other, and none after a refusal: a request
 * pipelined behind a refused one is never served, even when Node parsed it while the first
 * decision was still waiting on a signature. The marks live on the socket itself (symbols), so
 * nothing outlives it.
 */
export class SocketOrder {
  constructor(private readonly failed: (err: Error, socket: Duplex) => void) {}

  /** `mayBeFollowed` is false for an upgrade, after which Node parses nothing on the socket. */
  run(socket: Duplex, work: () => Promise<void>, mayBeFollowed = true): void {
    const marked = socket as MarkedSocket;
    const run = (): Promise<void> => {
      if (marked[REFUSED]) {
        socket.destroy();
        return Promise.resolve();
      }
      return work();
    };
    const prior = marked[PENDING];
    const done = (prior ? prior.then(run) : run()).catch((err: Error) => this.failed(err, socket));
    // Kept only where a later request may wait for it: an upgrade's socket carries no promise.
    if (mayBeFollowed) marked[PENDING] = done;
  }

  /** Nothing after this socket's current request is served. */
  refuse(socket: Duplex): void {
    (socket as MarkedSocket)[REFUSED] = true;
  }
}
