import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of one server (a node's way to NATS) that can cut the path as a partition does:
 * while cut, bytes either way are dropped and nothing is closed (no FIN, no RST: the peers find out only
 * by their own timeouts), and a new connection is accepted and then hears nothing. Healing closes the
 * connections that lost bytes (TCP would have given up on them) and forwards again.
 */
export class BlackholeProxy {
  private cut = false;
  /** Bytes that, once a node sends them, cut the path right after they went through. */
  private trigger: Buffer | null = null;
  /** Every open socket, each with whether it lost bytes to a cut. */
  private readonly sockets = new Map<Socket, { lost: boolean }>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<BlackholeProxy> {
    let proxy: BlackholeProxy | null = null;
    const server = createServer((client) => proxy?.accept(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
    proxy = new BlackholeProxy(server, address.port);
    return proxy;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** From now on nothing gets through, and nobody is told. */
  blackhole(): void {
    this.cut = true;
    for (const state of this.sockets.values()) state.lost = true;
  }

  /**
   * Lets the node's next bytes that contain `marker` through (its request reaches NATS), then cuts the
   * path before any answer can come back: a partition at the worst moment, made deterministic.
   */
  blackholeAfterSending(marker: string): void {
    this.trigger = Buffer.from(marker);
  }

  /** Forwards again; the connections that lost bytes meanwhile are closed. */
  heal(): void {
    this.cut = false;
    this.trigger = null;
    for (const [socket, state] of this.sockets) if (state.lost) socket.destroy();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets.keys()) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket, targetPort: number): void {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.set(socket, { lost: this.cut });
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    const forward = (from: Socket, to: Socket) =>
      from.on('data', (chunk: Buffer) => {
        const state = this.sockets.get(from);
        if (this.cut || state === undefined || state.lost) {
          if (state !== undefined) state.lost = true;
          return;
        }
        to.write(chunk);
        if (from === client && this.trigger !== null && chunk.includes(this.trigger)) {
          this.trigger = null;
          this.blackhole();
        }
      });
    forward(client, upstream);
    forward(upstream, client);
  }
}
