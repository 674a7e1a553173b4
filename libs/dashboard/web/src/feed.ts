import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { Snapshot } from '../../src/snapshot.types.js';
import { ADMIN_API, authHeaders, problemOf } from './api.js';

export type FeedState =
  | { readonly kind: 'connecting' }
  | { readonly kind: 'live' }
  /** The feed dropped; the next try is at `retryAt` (epoch ms). */
  | { readonly kind: 'lost'; readonly reason: string; readonly retryAt: number }
  /** 401 or 403: no retry until the operator signs in again. */
  | { readonly kind: 'refused'; readonly status: number; readonly message: string };

/** The broker sends a snapshot every second: this long without one means the feed is gone. */
const STALL_MS = 5_000;
const RETRY_MS = [1_000, 2_000, 5_000];

/**
 * Reads the broker's server-sent events with fetch(), which can send the Authorization header
 * (EventSource cannot), and keeps reading: a feed that ends, errs or stalls is opened again after a
 * short wait, which also carries the page over a broker restart. Returns the function that stops it.
 */
export function openFeed(
  onSnapshot: (snapshot: Snapshot) => void,
  onState: (state: FeedState) => void,
): () => void {
  let stopped = false;
  let controller = new AbortController();
  let failures = 0;
  let retry: number | undefined;

  const run = async (): Promise<void> => {
    controller = new AbortController();
    let stall: number | undefined;
    const watchdog = (): void => {
      window.clearTimeout(stall);
      stall = window.setTimeout(() => controller.abort(new Error('no data for 5 s')), STALL_MS);
    };
    onState({ kind: 'connecting' });
    try {
      watchdog();
      const res = await fetch(`${ADMIN_API}dashboard/feed`, {
        headers: authHeaders(),
        signal: controller.signal,
      });
      if (res.status === 401 || res.status === 403) {
        window.clearTimeout(stall);
        onState({ kind: 'refused', status: res.status, message: await problemOf(res) });
        return;
      }
      if (!res.ok || res.body === null) throw new Error(`${res.status} ${await problemOf(res)}`);
      const events = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      // A reader, not for await: Safari's streams are not async iterable.
      const reader = events.getReader();
      for (let next = await reader.read(); !next.done; next = await reader.read()) {
        if (next.value.event !== 'snapshot') continue;
        watchdog();
        failures = 0;
        onState({ kind: 'live' });
        onSnapshot(JSON.parse(next.value.data) as Snapshot);
      }
      throw new Error('the broker ended the feed');
    } catch (err) {
      window.clearTimeout(stall);
      if (stopped) return;
      const wait = RETRY_MS[Math.min(failures, RETRY_MS.length - 1)] ?? 5_000;
      failures++;
      const reason = controller.signal.aborted ? String(controller.signal.reason) : String(err);
      onState({ kind: 'lost', reason: reason.replace(/^(Type)?Error: /, ''), retryAt: Date.now() + wait });
      retry = window.setTimeout(() => void run(), wait);
    }
  };
  void run();
  return () => {
    stopped = true;
    window.clearTimeout(retry);
    controller.abort();
  };
}
