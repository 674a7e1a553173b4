import { inBatches } from '../protocol-bench/async-util.js';
import { CpuWindow, type CpuShares } from '../protocol-bench/cpu-window.js';
import { addError } from '../protocol-bench/markdown.js';
import { summarizeLatencies } from '../stats.js';
import { BenchClient } from './bench-client.js';
import { DeliveryTracker } from './delivery-tracker.js';
import { packetIdFor, PublishTemplate } from './mqtt-wire.js';

export interface TrafficOptions {
  /** Where the subscribers connect, and the publishers too unless publisherUrl is given. */
  readonly url: string;
  /** Where the publishers connect when not at `url` (another node of a cluster). */
  readonly publisherUrl?: string;
  readonly serverPid: number;
  readonly topic: string;
  readonly qos: 0 | 1;
  readonly publishers: number;
  readonly subscribers: number;
  /**
   * closed: each publisher keeps `window` messages under way, a message being under way until every
   * subscriber has it (the peak: the server is never idle, and nothing piles up without bound);
   * paced: `rate` messages per second in all, spread over the publishers, each stamped with its send
   * time (the latency run).
   */
  readonly load:
    { readonly kind: 'closed'; readonly window: number } | { readonly kind: 'paced'; readonly rate: number };
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly timeoutMs: number;
  /** Each client's sends of one tick leave in one write (see WriteBatcher), or a write per message. */
  readonly batchWrites: boolean;
  /**
   * Subscribers with persistent sessions (3.1.1 clean session false, ids of this run alone), which
   * a cluster feeds from its stream: the durable case. Their sessions are discarded after the run.
   */
  readonly persistent?: boolean;
  /** Called when the measured window opens and closes (to sample the CPU of other processes). */
  readonly onWindowStart?: () => void;
  readonly onWindowEnd?: () => void;
}

export interface TrafficResult {
  /** Messages received by subscribers in the measured window, per second (fan-out counts each copy). */
  readonly deliveriesPerSec: number;
  /** Publish-to-receipt latency of messages sent in the window (paced runs only). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpu: CpuShares;
  /**
   * Server CPU time per delivered message: the cost that does not depend on which process the
   * shared cores favoured during the window.
   */
  readonly serverCpuUsPerMessage: number | null;
  /** Lost, duplicated, reordered or malformed messages, missing PUBACKs, dropped connections. */
  readonly errors: ReadonlyMap<string, number>;
  /** Messages the publishers sent over the whole run, warm-up included. */
  readonly published: number;
  /** First receipts of a sent message over the whole run, summed over subscribers (fan-out counts each copy). */
  readonly received: number;
}

const CONNECT_PARALLEL = 50;
const PACE_TICK_MS = 5;
const DRAIN_POLL_MS = 20;

/** Connects the clients, runs warm-up + measured window, waits for every message, checks and closes. */
/** Runs of this process so far: a persistent run's client ids are its own. */
let runs = 0;

export async function runTraffic(options: TrafficOptions): Promise<TrafficResult> {
  const run = ++runs;
  const subscriberId = (s: number): string =>
    options.persistent === true ? `sub-${s}-${process.pid}-${run}` : `sub-${s}-${process.pid}`;
  const errors = new Map<string, number>();
  const onError = (label: string): void => addError(errors, label);
  const tracker = new DeliveryTracker(options.publishers, options.subscribers);
  const latencies: number[] = [];
  const pubacks = new Uint32Array(options.publishers);
  let windowStart = Infinity;
  let windowEnd = Infinity;
  let deliveriesInWindow = 0;
  let published = 0;
  let received = 0;
  let sending = true;

  const templates = Array.from(
    { length: options.publishers },
    (_, p) => new PublishTemplate(options.topic, options.qos, p),
  );
  const clients: BenchClient[] = [];
  const closeAll = (): Promise<unknown> =>
    Promise.all(clients.map((client) => client.close(options.timeoutMs)));
  try {
    await inBatches(options.subscribers, CONNECT_PARALLEL, async (s) => {
      const client = await BenchClient.connect(
        options.url,
        subscriberId(s),
        {
          onPublish: (publish) => {
            const now = performance.now();
            const verdict = tracker.delivered(s, publish.publisher, publish.seq);
            if (verdict.error !== null) addError(errors, verdict.error, verdict.errorCount);
            if (!verdict.fresh) return;
            received++;
            if (now >= windowStart && now < windowEnd) deliveriesInWindow++;
            if (publish.sentAt >= windowStart && publish.sentAt < windowEnd)
              latencies.push(now - publish.sentAt);
            if (verdict.completed && sending && options.load.kind === 'closed') sendNext(publish.publisher);
          },
          onError,
        },
        options.timeoutMs,
        options.batchWrites,
        options.persistent !== true,
      );
      clients.push(client);
      await client.subscribe(options.topic, options.qos, options.timeoutMs);
    });
    const publishers = await inBatches(options.publishers, CONNECT_PARALLEL, async (p) => {
      const client = await BenchClient.connect(
        options.publisherUrl ?? options.url,
        `pub-${p}-${process.pid}`,
        { onPuback: () => (pubacks[p] = (pubacks[p] as number) + 1), onError },
        options.timeoutMs,
        options.batchWrites,
      );
      clients.push(client);
      return client;
    });

    function sendNext(p: number): void {
      const now = performance.now();
      const seq = tracker.published(p);
      published++;
      (publishers[p] as BenchClient).send(
        (templates[p] as PublishTemplate).build(seq, now, packetIdFor(seq)),
      );
    }

    const cpu = new CpuWindow(options.serverPid);
    const started = performance.now();
    windowStart = started + options.warmupMs;
    windowEnd = windowStart + options.durationMs;
    const timers = [
      setTimeout(() => {
        cpu.start();
        options.onWindowStart?.();
      }, options.warmupMs),
      setTimeout(() => {
        cpu.stop();
        options.onWindowEnd?.();
      }, options.warmupMs + options.durationMs),
    ];
    const load = options.load;
    let pacer: NodeJS.Timeout | undefined;
    if (load.kind === 'closed') {
      for (let p = 0; p < options.publishers; p++) for (let i = 0; i < load.window; i++) sendNext(p);
    } else {
      let sent = 0;
      let next = 0;
      pacer = setInterval(() => {
        const due = Math.floor((load.rate * (performance.now() - started)) / 1000) - sent;
        for (let i = 0; i < due; i++) {
          sendNext(next);
          next = (next + 1) % options.publishers;
        }
        sent += Math.max(0, due);
      }, PACE_TICK_MS);
    }
    await new Promise((resolve) => setTimeout(resolve, options.warmupMs + options.durationMs));
    sending = false;
    clearInterval(pacer);
    for (const timer of timers) clearTimeout(timer);

    await waitFor(
      () => tracker.outstanding() === 0 && (options.qos === 0 || tracker.pubacksMissing(pubacks) === 0),
      options.timeoutMs,
    );
    const lost = tracker.outstanding();
    if (lost > 0) addError(errors, `lost (not received within ${options.timeoutMs} ms)`, lost);
    if (options.qos === 1) {
      const missing = tracker.pubacksMissing(pubacks);
      if (missing !== 0) addError(errors, 'PUBACK missing or extra', Math.abs(missing));
    }
    const latency = summarizeLatencies(latencies);
    const seconds = options.durationMs / 1000;
    return {
      deliveriesPerSec: deliveriesInWindow / seconds,
      p50Ms: latency.p50,
      p99Ms: latency.p99,
      cpu: cpu.shares,
      serverCpuUsPerMessage:
        cpu.shares.serverMs === null || deliveriesInWindow === 0
          ? null
          : (cpu.shares.serverMs * 1000) / deliveriesInWindow,
      errors,
      published,
      received,
    };
  } finally {
    await closeAll();
    // A clean-session CONNECT discards what a persistent session left on the server.
    if (options.persistent === true) {
      await inBatches(options.subscribers, CONNECT_PARALLEL, async (s) => {
        const client = await BenchClient.connect(
          options.url,
          subscriberId(s),
          { onError },
          options.timeoutMs,
        );
        await client.close(options.timeoutMs);
      }).catch((err: Error) => addError(errors, `persistent session not discarded: ${err.message}`));
    }
  }
}

async function waitFor(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done() && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
  }
}
