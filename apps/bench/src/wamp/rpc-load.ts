import type WebSocket from 'ws';
import { type WindowOptions } from '../cpu-window.js';
import { ErrorCounts } from '../load/error-counts.js';
import { openMany } from '../load/ws-client.js';
import { type MeasuredLoad } from '../measure-round.js';
import { MeasuredWindow } from '../measured-window.js';
import { startCallee } from './callee-ipc.js';
import { ARGS_INDEX, call, expectType, readMessage, readStamp, WAMP } from './wamp-load-messages.js';
import { openSession, type WampSession } from './wamp-session.js';

const PROCEDURE = 'bench.echo';
const CONNECT_CONCURRENCY = 50;
const WATCHDOG_INTERVAL_MS = 250;

export interface RpcSettings extends WindowOptions {
  readonly callers: number;
  /** Per session setup and per call. */
  readonly timeoutMs: number;
}

export interface RpcResult extends MeasuredLoad {
  readonly sockets: readonly WebSocket[];
}

export interface Pending {
  readonly requestId: number;
  readonly sentAt: number;
}

/**
 * One callee that echoes its arguments (in its own process), C callers in a closed loop (the next
 * CALL as soon as the RESULT is in). A RESULT must answer the pending request with the arguments
 * sent; anything else, and a call unanswered within the timeout, is counted as an error. Only
 * RESULTs received inside the measured window count.
 */
export async function runRpc(port: number, settings: RpcSettings): Promise<RpcResult> {
  const errors = new ErrorCounts();
  let over = false;
  const fail = (label: string): void => {
    if (!over) errors.add(label);
  };
  const callee = await startCallee(port, PROCEDURE, settings.timeoutMs);
  const callers = await openMany(settings.callers, CONNECT_CONCURRENCY, () =>
    openSession(port, 'caller', settings.timeoutMs),
  );

  const latenciesMs: number[] = [];
  const pending = new Map<WampSession, Pending>();
  await new Promise<void>((resolve) => {
    const finishIfIdle = (): void => {
      if (measured.issuing || pending.size > 0) return;
      measured.cancel();
      clearInterval(watchdog);
      resolve();
    };
    const measured = new MeasuredWindow(settings, finishIfIdle);
    const next = (caller: WampSession, requestId: number): void => {
      if (!measured.issuing) return finishIfIdle();
      const sentAt = performance.now();
      pending.set(caller, { requestId, sentAt });
      caller.ws.send(call(requestId, PROCEDURE, [requestId, sentAt]));
    };
    // An unanswered call ends that caller's loop with an error instead of hanging the round.
    const watchdog = setInterval(() => {
      const now = performance.now();
      for (const [caller, sent] of pending) {
        if (now - sent.sentAt < settings.timeoutMs) continue;
        fail(`call not answered within ${settings.timeoutMs} ms`);
        pending.delete(caller);
      }
      finishIfIdle();
    }, WATCHDOG_INTERVAL_MS);
    for (const caller of callers) {
      caller.inbox.forEach(
        (text) => {
          const now = performance.now();
          const sent = pending.get(caller);
          if (sent === undefined) return fail('message to a caller with no call pending');
          pending.delete(caller);
          const problem = resultProblem(text, sent);
          if (problem !== null) fail(`caller: ${problem}`);
          else if (measured.contains(now)) latenciesMs.push(now - sent.sentAt);
          next(caller, sent.requestId + 1);
        },
        (why) => fail(`caller ${why}`),
      );
      next(caller, 1);
    }
  });
  over = true;
  for (const [label, count] of await callee.stop()) errors.add(label, count);
  return {
    operations: latenciesMs.length,
    durationMs: settings.durationMs,
    latenciesMs,
    errors: errors.byLabel,
    sockets: callers.map((c) => c.ws),
  };
}

/** Null when `text` is the RESULT of the pending call, echoing its arguments; else what is wrong. */
export function resultProblem(text: string, sent: Pending): string | null {
  const result = expectType(readMessage(text), WAMP.RESULT);
  if (typeof result === 'string') return result;
  const stamp = readStamp(result, ARGS_INDEX[WAMP.RESULT]);
  if (typeof stamp === 'string') return stamp;
  const answers =
    result[1] === sent.requestId && stamp.seq === sent.requestId && stamp.sentAtMs === sent.sentAt;
  return answers ? null : 'RESULT does not answer the pending CALL';
}
