import { connect } from 'node:net';
import { checkUpgradeResponse } from './check-response.js';
import { type WindowOptions } from './cpu-window.js';
import { MeasuredWindow } from './measured-window.js';
import { clientCloseFrame, type PreparedUpgrade } from './upgrade-request.js';

/** A response head larger than this is not a WebSocket handshake answer. */
const MAX_HEAD_BYTES = 16 * 1024;

export interface LoadOptions extends WindowOptions {
  readonly port: number;
  readonly upgrades: readonly PreparedUpgrade[];
  readonly subprotocol: string;
  readonly concurrency: number;
  /** Idle limit per connection: a server that stops answering fails the handshake instead of hanging the run. */
  readonly timeoutMs: number;
}

export interface LoadResult {
  /** Correct 101 responses received inside the measured window. */
  readonly handshakes: number;
  readonly durationMs: number;
  /** Connect-to-101 latencies of those handshakes, in milliseconds. */
  readonly latenciesMs: number[];
  /** Every failure of the round, warm-up included, by label. */
  readonly errors: ReadonlyMap<string, number>;
}

export interface HandshakeOutcome {
  /** Connect-to-101 time, or null when no correct 101 arrived. */
  readonly latencyMs: number | null;
  /** When the 101 (or the failure) was seen, on the performance.now() clock. */
  readonly at: number;
  readonly error: string | null;
}

/**
 * C loops, each: connect, write the upgrade request, read the response head and check it, then
 * send a close frame and wait for the server to close the TCP connection. Waiting for the server's
 * FIN (RFC 6455 section 7.1.1: the server closes first) puts TIME_WAIT on the server's side, so the
 * client's ephemeral ports are not used up at thousands of handshakes per second.
 */
export async function runHandshakeLoad(options: LoadOptions): Promise<LoadResult> {
  const closeFrame = clientCloseFrame();
  const measured = new MeasuredWindow(options);
  const latenciesMs: number[] = [];
  const errors = new Map<string, number>();
  let next = 0;

  const loop = async (): Promise<void> => {
    while (measured.issuing) {
      const upgrade = options.upgrades[next++ % options.upgrades.length] as PreparedUpgrade;
      const outcome = await handshakeOnce(
        options.port,
        upgrade,
        options.subprotocol,
        closeFrame,
        options.timeoutMs,
      );
      if (outcome.error !== null) errors.set(outcome.error, (errors.get(outcome.error) ?? 0) + 1);
      if (outcome.latencyMs !== null && measured.contains(outcome.at)) {
        latenciesMs.push(outcome.latencyMs);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, loop));
  } finally {
    measured.cancel();
  }
  return { handshakes: latenciesMs.length, durationMs: options.durationMs, latenciesMs, errors };
}

/** One connection's life; never rejects: every failure becomes an outcome with an error label. */
export function handshakeOnce(
  port: number,
  upgrade: PreparedUpgrade,
  subprotocol: string,
  closeFrame: Buffer,
  timeoutMs: number,
): Promise<HandshakeOutcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    let head = '';
    let latencyMs: number | null = null;
    let at = 0;
    let error: string | null = null;
    const fail = (label: string): void => {
      error ??= latencyMs === null ? label : `after 101: ${label}`;
      at ||= performance.now();
      socket.destroy();
    };

    socket.setTimeout(timeoutMs, () => fail('timeout'));
    socket.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    socket.on('data', (chunk: Buffer) => {
      // After the head come the welcome message and the server's close frame: not needed.
      if (at !== 0) return;
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) {
        if (head.length > MAX_HEAD_BYTES) fail('response head too large');
        return;
      }
      at = performance.now();
      const problem = checkUpgradeResponse(head.slice(0, end), upgrade.expectedAccept, subprotocol);
      if (problem !== null) return fail(problem);
      latencyMs = at - started;
      socket.write(closeFrame);
    });
    socket.on('close', () => {
      if (at === 0) {
        error ??= 'closed before a response';
        at = performance.now();
      }
      resolve({ latencyMs, at, error });
    });
    socket.write(upgrade.request);
  });
}
