import WebSocket from 'ws';
import { type CloseEvent, closed, opened } from './ws-helpers.js';

const TIMEOUT_MS = 3000;

/** Roles a raw test client announces: enough for the router to send it everything. */
export const CLIENT_ROLES = {
  caller: { features: { call_canceling: true, progressive_call_results: true, caller_identification: true } },
  callee: {
    features: { call_canceling: true, progressive_call_results: true, pattern_based_registration: true },
  },
  publisher: { features: {} },
  subscriber: { features: {} },
};

/** A WAMP client on a bare `ws` socket: sends exactly what the test says, queues what arrives. */
export class RawWamp {
  private readonly queue: unknown[][] = [];
  private readonly waiters: ((message: unknown[]) => void)[] = [];
  readonly closed: Promise<CloseEvent>;

  private constructor(readonly ws: WebSocket) {
    this.closed = closed(ws, 10_000);
    ws.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as unknown[];
      const waiter = this.waiters.shift();
      if (waiter) waiter(message);
      else this.queue.push(message);
    });
  }

  static async connect(url: string): Promise<RawWamp> {
    const ws = new WebSocket(url, 'wamp.2.json');
    await opened(ws);
    return new RawWamp(ws);
  }

  /** Connects and joins `realm` anonymously; resolves with the WELCOME. */
  static async join(
    url: string,
    realm = 'realm1',
    details: object = {},
  ): Promise<{ client: RawWamp; welcome: unknown[] }> {
    const client = await RawWamp.connect(url);
    client.send([1, realm, { roles: CLIENT_ROLES, ...details }]);
    const welcome = await client.next();
    if (welcome[0] !== 2) throw new Error(`expected WELCOME, got ${JSON.stringify(welcome)}`);
    return { client, welcome };
  }

  send(message: unknown[] | string | Buffer): void {
    this.ws.send(Array.isArray(message) ? JSON.stringify(message) : message);
  }

  next(): Promise<unknown[]> {
    const queued = this.queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const waiter = (message: unknown[]): void => {
        clearTimeout(timer);
        resolve(message);
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error('timed out waiting for a WAMP message'));
      }, TIMEOUT_MS);
      this.waiters.push(waiter);
    });
  }

  /** Sends and waits for the answer. */
  async request(message: unknown[]): Promise<unknown[]> {
    this.send(message);
    return this.next();
  }

  close(): void {
    this.ws.close();
  }
}
