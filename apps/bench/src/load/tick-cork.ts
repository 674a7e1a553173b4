import { createConnection, type NetConnectOpts, type Socket } from 'node:net';

/**
 * Holds a load client's writes until the current callback's tick ends (mqtt-packet's own
 * cork-then-uncork-on-nextTick), so the answers to one read's messages leave in one write: a syscall
 * per message made the load generator, which shares the machine with the servers, its own
 * bottleneck. Waiting for the end of the whole turn instead held a publisher's next message behind
 * a thousand subscribers' reads, and the closed loop measured that wait.
 */
export class TickCork {
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

  /** Call before a send: the first one of a tick corks the socket until process.nextTick. */
  hold(): void {
    if (this.corked || this.socket === undefined) return;
    this.corked = true;
    this.socket.cork();
    process.nextTick(this.uncork);
  }
}
