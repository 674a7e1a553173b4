import { connect } from 'node:net';

export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Everything the server sent before closing (or before the timeout). */
  readonly raw: string;
  /** The server closed the socket. */
  readonly closed: boolean;
}

export const GOOD_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** A valid upgrade request for `path`, with header lines added or replaced (a null value removes one). */
export function upgradeRequest(path: string, headers: Record<string, string | null> = {}): string {
  const base: Record<string, string | null> = {
    Host: '127.0.0.1',
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': GOOD_KEY,
    'Sec-WebSocket-Version': '13',
  };
  const merged = { ...base, ...headers };
  const lines = Object.entries(merged)
    .filter((entry): entry is [string, string] => entry[1] !== null)
    .map(([name, value]) => `${name}: ${value}`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Sends bytes on a fresh TCP connection and collects the answer: malformed input that no HTTP or
 * WebSocket client would send. Resolves when the server closes, or after `waitMs` (then the head
 * of what arrived is parsed, e.g. a 101 that keeps the socket open).
 */
export function rawExchange(
  port: number,
  request: string | Buffer,
  waitMs = 1500,
  /** The loopback address to connect from (default: the system's choice, 127.0.0.1). */
  localAddress?: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', ...(localAddress !== undefined && { localAddress }) });
    const chunks: Buffer[] = [];
    let closed = false;
    const timer = setTimeout(() => finish(), waitMs);
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(parse(Buffer.concat(chunks), closed));
    };
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.on('error', (err) => (chunks.length > 0 ? finish() : reject(err)));
    socket.write(request);
  });
}

/**
 * The status of the server's answer to `request`, as soon as its head has arrived (a 101 keeps the
 * socket open, so waiting for a close or a fixed time would read a slow answer as none); null when the
 * server closes the connection without answering. Rejects when neither happens within `timeoutMs`.
 */
export function answerStatus(
  port: number,
  request: string,
  localAddress: string,
  timeoutMs = 10_000,
): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    const chunks: Buffer[] = [];
    const settle = (outcome: number | null | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(
      () => settle(new Error(`no answer and no close within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const data = Buffer.concat(chunks);
      if (data.includes('\r\n\r\n')) settle(parse(data, false).status);
    });
    // A reset instead of a FIN is a close without an answer too.
    socket.on('error', () => settle(null));
    socket.on('close', () => settle(null));
    socket.write(request);
  });
}

function parse(data: Buffer, closed: boolean): RawResponse {
  const raw = data.toString('latin1');
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(' ')[1] ?? 0);
  return { status, headers, body: end === -1 ? '' : raw.slice(end + 4), raw, closed };
}
