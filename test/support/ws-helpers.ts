import type WebSocket from 'ws';

const TIMEOUT_MS = 3000;

function timed<T>(
  what: string,
  executor: (resolve: (value: T) => void, reject: (err: Error) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), TIMEOUT_MS);
    executor(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

export function opened(ws: WebSocket): Promise<void> {
  return timed('open', (resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}

export function nextMessage(ws: WebSocket): Promise<string> {
  return timed('a message', (resolve, reject) => {
    ws.once('message', (data: Buffer) => resolve(data.toString('utf8')));
    ws.once('error', reject);
  });
}

export interface CloseEvent {
  readonly code: number;
  readonly reason: string;
}

export function closed(ws: WebSocket, timeoutMs = TIMEOUT_MS): Promise<CloseEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out waiting for close')), timeoutMs);
    ws.once('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
  });
}

/** Resolves with the HTTP status of a refused handshake (the ws client's 'unexpected-response'). */
export function refusedStatus(ws: WebSocket): Promise<number> {
  return timed('a refused handshake', (resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      ws.terminate();
    });
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.on('error', () => undefined);
  });
}

/** Polls until `check` holds; fails the test after the timeout. */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  timeoutMs = TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
