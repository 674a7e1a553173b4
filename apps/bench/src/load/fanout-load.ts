import type WebSocket from 'ws';
import { type WindowOptions } from '../cpu-window.js';
import { type MeasuredLoad } from '../measure-round.js';
import { MeasuredWindow } from '../measured-window.js';
import { ErrorCounts } from './error-counts.js';
import { openMany } from './ws-client.js';

/** Where a subscriber reports what it received. */
export interface DeliverySink {
  /** One event: its sequence number (0 for readiness probes) and when it was published (performance.now()). */
  deliver(seq: number, sentAtMs: number): void;
  /** A message that is not a correct event, or an unexpected close. */
  fail(label: string): void;
}

export interface Publisher {
  readonly socket: WebSocket;
  /** Publishes one event carrying its sequence number and publish time. */
  publish(seq: number, sentAtMs: number): void;
}

/** One protocol's clients: GraphQL subscriptions, WAMP subscribers. */
export interface FanoutClients {
  /** Resolves once the subscription is requested (not necessarily active yet: probes find out). */
  openSubscriber(sink: DeliverySink): Promise<WebSocket>;
  openPublisher(fail: (label: string) => void): Promise<Publisher>;
}

export interface FanoutSettings extends WindowOptions {
  readonly subscribers: number;
  /** Events published but not yet received by every subscriber, at most. */
  readonly inFlight: number;
  /** Per connection setup, for every subscriber to be reached by a probe, and per event. */
  readonly timeoutMs: number;
}

export interface FanoutResult extends MeasuredLoad {
  readonly sockets: readonly WebSocket[];
}

const CONNECT_CONCURRENCY = 50;
const PROBE_INTERVAL_MS = 200;
const WATCHDOG_INTERVAL_MS = 250;

/**
 * S subscribers, one publisher, a closed loop: event n+1 is published as soon as fewer than
 * `inFlight` events are still missing a subscriber, so the server runs as fast as it delivers and
 * its queues stay bounded. Every subscriber must receive every event once, in order; anything else
 * is counted as an error. Only deliveries received inside the measured window count.
 */
export async function runFanout(clients: FanoutClients, settings: FanoutSettings): Promise<FanoutResult> {
  const errors = new ErrorCounts();
  const subscribers = settings.subscribers;
  const last = new Float64Array(subscribers);
  const probed = new Uint8Array(subscribers);
  let probedCount = 0;
  const missing = new Map<number, { sentAt: number; remaining: number }>();
  const latenciesMs: number[] = [];
  let inWindow = (_at: number): boolean => false;
  let onEventComplete = (): void => {};
  // Set once the round is over: the closes that follow are the benchmark's own.
  let over = false;
  const fail = (label: string): void => {
    if (!over) errors.add(label);
  };

  const sink = (index: number): DeliverySink => ({
    deliver: (seq, sentAt) => {
      if (seq === 0) {
        if (probed[index] === 0) probedCount++;
        probed[index] = 1;
        return;
      }
      const now = performance.now();
      if (seq !== (last[index] as number) + 1) errors.add('event out of order, duplicated or lost');
      last[index] = Math.max(last[index] as number, seq);
      const event = missing.get(seq);
      if (event === undefined) return errors.add('event not published, or received twice');
      if (inWindow(now)) latenciesMs.push(now - sentAt);
      if (--event.remaining === 0) {
        missing.delete(seq);
        onEventComplete();
      }
    },
    fail,
  });

  const sockets = await openMany(subscribers, CONNECT_CONCURRENCY, (i) => clients.openSubscriber(sink(i)));
  const publisher = await clients.openPublisher((label) => fail(`publisher: ${label}`));
  sockets.push(publisher.socket);
  await probeUntilSubscribed(publisher, () => probedCount === subscribers, settings.timeoutMs);

  let seq = 0;
  await new Promise<void>((resolve) => {
    const finish = (): void => {
      measured.cancel();
      clearInterval(watchdog);
      onEventComplete = () => {};
      resolve();
    };
    const pump = (): void => {
      while (measured.issuing && missing.size < settings.inFlight) {
        seq++;
        const sentAt = performance.now();
        missing.set(seq, { sentAt, remaining: subscribers });
        publisher.publish(seq, sentAt);
      }
      if (!measured.issuing && missing.size === 0) finish();
    };
    const measured = new MeasuredWindow(settings, () => pump());
    inWindow = (at) => measured.contains(at);
    // A stuck event ends the round with an error instead of hanging it.
    const watchdog = setInterval(() => {
      const now = performance.now();
      for (const [stuck, event] of missing) {
        if (now - event.sentAt < settings.timeoutMs) continue;
        errors.add(`event not received by every subscriber within ${settings.timeoutMs} ms`);
        errors.add('deliveries lost (event timed out)', event.remaining);
        missing.delete(stuck);
      }
      pump();
    }, WATCHDOG_INTERVAL_MS);
    onEventComplete = pump;
    pump();
  });
  over = true;
  for (const received of last) {
    if (received !== seq) errors.add('subscriber did not receive the last event');
  }
  return {
    operations: latenciesMs.length,
    durationMs: settings.durationMs,
    latenciesMs,
    errors: errors.byLabel,
    sockets,
  };
}

/**
 * Subscriptions may become active a little after they are requested (graphql-transport-ws has no
 * acknowledgement for them): probe events (seq 0) go out until every subscriber has received one.
 */
async function probeUntilSubscribed(
  publisher: Publisher,
  allReached: () => boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!allReached()) {
    if (performance.now() > deadline) {
      throw new Error(`not every subscriber received a probe event within ${timeoutMs} ms`);
    }
    publisher.publish(0, performance.now());
    await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
  }
}
