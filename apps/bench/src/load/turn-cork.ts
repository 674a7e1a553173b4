import { createConnection, type NetConnectOpts, type Socket } from 'node:net';

/**
 * Holds a load client's writes for the rest of the event loop's turn, so the answers to one read's
 * messages leave in one write, as the servers under test send theirs: a syscall per message made
 * the load generator, which shares the machine with the servers, its own bottleneck.
 */
export class TurnCork {
  private socket: Socket | undefined;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket?.uncork();
  };

  /** ws's `createConnection` option (called as http calls it: the overloads of its type are net's). */
  readonly createConnection = ((options: NetConnectOpts): Socket => {
    this.socket = createConnection(options);
    return this.socket;
  }) as typeof createConnection;

  /** Call before a send: the first one of a turn corks the socket until setImmediate. */
  hold(): void {
    if (this.corked || this.socket === undefined) return;
    this.corked = true;
    this.socket.cork();
    setImmediate(this.uncork);
  }
}
