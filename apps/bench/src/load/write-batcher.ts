import { createConnection, type NetConnectOpts, type Socket } from 'node:net';

/**
 * Holds a load client's writes so that many messages leave in one: a syscall per message made the
 * load generator, which shares the machine with the servers, its own bottleneck.
 *
 * - `tick`: until the current callback's tick ends (mqtt-packet's own cork-then-uncork-on-nextTick),
 *   so the answers to one read's messages leave together. For clients in a closed loop with many
 *   sockets: waiting for the end of the turn held a publisher's next message behind a thousand
 *   subscribers' reads, and the loop then measured that wait.
 * - `turn`: until the I/O callbacks of the event loop's turn have run (setImmediate), as the broker
 *   holds its own writes. For the RPC callee, whose INVOCATIONs can arrive in several reads per turn.
 */
export class WriteBatcher {
  private socket: Socket | undefined;
  private corked = false;
  private readonly uncork = (): void => {
    this.corked = false;
    this.socket?.uncork();
  };

  constructor(private readonly until: 'tick' | 'turn') {}

  /** ws's `createConnection` option (called as http calls it: the overloads of its type are net's). */
  readonly createConnection = ((options: NetConnectOpts): Socket => {
    this.socket = createConnection(options);
    return this.socket;
  }) as typeof createConnection;

  /** Call before a send: the first one of a tick (or turn) corks the socket until it ends. */
  hold(): void {
    if (this.corked || this.socket === undefined) return;
    this.corked = true;
    this.socket.cork();
    if (this.until === 'tick') process.nextTick(this.uncork);
    else setImmediate(this.uncork);
  }
}
