import WebSocket from 'ws';
import { type WriteBatcher } from './write-batcher.js';

export interface ClientTarget {
  readonly port: number;
  readonly path: string;
  readonly subprotocol: string;
  /** Set to hold the client's sends for the tick or turn (see WriteBatcher); it gets the client's socket. */
  readonly batcher?: WriteBatcher;
  /** Offer permessage-deflate (off unless set: its cost on the load side would load the shared machine). */
  readonly deflate?: boolean;
  /** The loopback address to connect from (default: the system's choice, 127.0.0.1). */
  readonly localAddress?: string;
}

/**
 * A raw `ws` client (no protocol library: its own cost would load the machine the servers share).
 * Resolves once open with the subprotocol we asked for; rejects on refusal, error or timeout.
 */
export function openClient(target: ClientTarget, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${target.port}${target.path}`, target.subprotocol, {
      perMessageDeflate: target.deflate === true,
      handshakeTimeout: timeoutMs,
      ...(target.localAddress !== undefined && { localAddress: target.localAddress }),
      ...(target.batcher && { createConnection: target.batcher.createConnection }),
    });
    const fail = (why: string): void => {
      ws.terminate();
      reject(new Error(why));
    };
    ws.once('unexpected-response', (_request, response) => fail(`HTTP ${response.statusCode}`));
    ws.once('error', (err) => fail(err.message));
    ws.once('open', () => {
      ws.removeAllListeners('error');
      // Later socket errors end in 'close', which the load loops watch; this keeps them from throwing.
      ws.on('error', () => ws.terminate());
      if (ws.protocol !== target.subprotocol) return fail(`subprotocol "${ws.protocol}" selected`);
      resolve(ws);
    });
  });
}

/**
 * Every text message of one client, in order, buffered until a reader takes it: `next` for the
 * request/answer steps of a session's setup, then `forEach` for the steady stream. A `once`
 * listener per step could miss a second message parsed from the same TCP chunk.
 */
export class MessageInbox {
  private readonly buffered: string[] = [];
  private reader: ((text: string) => void) | null = null;
  private closedWith: string | null = null;
  private onClosed: (() => void) | null = null;

  constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      const text = isBinary ? `<binary ${data.length} bytes>` : data.toString('utf8');
      if (this.reader === null) this.buffered.push(text);
      else this.reader(text);
    });
    ws.once('close', (code: number, reason: Buffer) => {
      this.closedWith = `closed ${code} ${reason.toString('utf8')}`.trim();
      this.onClosed?.();
    });
  }

  /** The next message; rejects when the connection closes or nothing comes in time. */
  next(timeoutMs: number, waitingFor: string): Promise<string> {
    const ready = this.buffered.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.closedWith !== null) return Promise.reject(new Error(`${this.closedWith} before ${waitingFor}`));
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.reader = null;
        this.onClosed = null;
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${waitingFor} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.reader = (text) => {
        done();
        resolve(text);
      };
      this.onClosed = () => {
        done();
        reject(new Error(`${this.closedWith} before ${waitingFor}`));
      };
    });
  }

  /** Hands every later message (and those buffered) to `handle`, and an unexpected close to `closed`. */
  forEach(handle: (text: string) => void, closed: (why: string) => void): void {
    for (const text of this.buffered.splice(0)) handle(text);
    this.reader = handle;
    if (this.closedWith !== null) return closed(this.closedWith);
    this.onClosed = () => closed(this.closedWith ?? 'closed');
  }
}

/** `count` results of `open`, at most `concurrency` at a time: thousands of SYNs at once overflow the backlog. */
export async function openMany<T>(
  count: number,
  concurrency: number,
  open: (index: number) => Promise<T>,
): Promise<T[]> {
  const opened: T[] = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      opened[index] = await open(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return opened;
}

/** Closes every client with a close frame and waits for the server's answer, terminating stragglers. */
export async function closeAll(sockets: readonly WebSocket[], timeoutMs: number): Promise<void> {
  await Promise.all(
    sockets.map((ws) => {
      if (ws.readyState === WebSocket.CLOSED) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => ws.terminate(), timeoutMs);
        ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        ws.close(1000);
      });
    }),
  );
}
