import { setTimeout as sleep } from 'node:timers/promises';
import { RPCClient } from 'ocpp-rpc';
import { type Wampy } from 'wampy';
import WebSocket from 'ws';
import { type BrokerNode } from './cluster.js';
import { BOOT } from './ocpp.js';
import { connectWampy, deferred } from './wamp-clients.js';

/** A callee's (or charge point's) keep-alive: a ping each second, and the connection dropped after a missed pong. */
const PING_MS = 1000;

/** Calls in flight at most: a cluster that stops answering must not grow the workload without bound. */
const MAX_IN_FLIGHT = 200;

/** The outcome of a call the caller gave up on: it counts as unanswered, not as an error. */
export const NO_ANSWER = 'no answer';

/** One call: its argument `k`, when it was made, and how it ended (null while it has not). */
export interface Call {
  readonly k: number;
  readonly at: number;
  ended: number | null;
  /** 'ok' (its own `k` came back), 'wrong' (another answer), or the error's name or status. */
  outcome: string | null;
}

/** What became of a workload's calls. */
export interface CallStats {
  readonly calls: number;
  readonly ok: number;
  /** Answers that were not the call's own echo. */
  readonly wrong: number;
  /** Calls with no answer by the end: a caller without a timeout would wait forever. */
  readonly unanswered: number;
  /** Errors by name (WAMP error URI, or HTTP status and the admin API's reason). */
  readonly errors: Readonly<Record<string, number>>;
  /** The longest a call took to end in an error, in ms. */
  readonly slowestErrorMs: number;
  /** Calls whose callee ran them more than once. */
  readonly invokedTwice: number;
  /** When the last call came back with its echo. */
  readonly lastOkAt: number;
  /** The longest run of calls, in the order made, of which none came back with its echo. */
  readonly longestOutage: Outage | null;
}

/** A run of calls that did not come back with their echo: when it began and ended, and how they ended. */
export interface Outage {
  readonly from: number;
  readonly to: number;
  readonly outcomes: Readonly<Record<string, number>>;
  /** The callee's connections meanwhile: node, from, to (null: open at the end). */
  readonly callees: readonly CalleeConnection[];
}

/** One connection of the callee side (a WAMP callee, a charge point). */
export interface CalleeConnection {
  readonly node: string;
  readonly from: number;
  to: number | null;
}

/** The longest run of calls, in the order made, that did not end 'ok'. */
function longestOutage(calls: readonly Call[], callees: readonly CalleeConnection[]): Outage | null {
  let best: { start: number; end: number } | null = null;
  let start = -1;
  calls.forEach((call, i) => {
    if (call.outcome !== 'ok') {
      if (start < 0) start = i;
      if (best === null || i - start > best.end - best.start) best = { start, end: i };
    } else start = -1;
  });
  if (best === null) return null;
  const { start: first, end: last } = best;
  const run = calls.slice(first, last + 1);
  const outcomes: Record<string, number> = {};
  for (const call of run)
    outcomes[call.outcome ?? NO_ANSWER] = (outcomes[call.outcome ?? NO_ANSWER] ?? 0) + 1;
  const from = run[0]?.at ?? 0;
  const to = run.at(-1)?.at ?? 0;
  const meanwhile = callees.filter((c) => c.from <= to && (c.to === null || c.to >= from));
  return { from, to, outcomes, callees: meanwhile };
}

/**
 * A caller that calls every `gapMs`, whether or not the calls before have come back (a call that hangs
 * must not hide the ones after it), and a callee side that counts how often each `k` ran.
 */
export abstract class CallWorkload {
  readonly calls: Call[] = [];
  /** The callee side's connections, in turn. */
  readonly callees: CalleeConnection[] = [];
  /** How often the callee ran each `k`. */
  readonly invoked = new Map<number, number>();
  /** Set when the calls stop: the callee side keeps serving the calls in flight until `stopping`. */
  private callsStopped = false;
  protected stopped = false;
  /** Resolves when the workload ends: each callee connection then ends itself. */
  protected readonly stopping = deferred<true>();
  /** Calls made and not ended yet. */
  private inFlight = 0;
  private calling: Promise<void> = Promise.resolve();
  private serving: Promise<void> = Promise.resolve();

  constructor(private readonly nodes: () => readonly BrokerNode[]) {}

  /** Connects the callee to the nodes in turn (the next one after each connection ends), and starts calling. */
  start(gapMs: number): void {
    this.serving = (async () => {
      for (let turn = 0; !this.stopped; turn++) {
        const all = this.nodes();
        const node = all[turn % all.length];
        if (node !== undefined) {
          const connection: CalleeConnection = { node: node.id, from: performance.now(), to: null };
          this.callees.push(connection);
          await this.serve(node).catch(() => undefined);
          connection.to = performance.now();
        }
        await sleep(200);
      }
    })();
    this.calling = (async () => {
      for (let k = 1; !this.callsStopped; k++) {
        if (this.inFlight < MAX_IN_FLIGHT) {
          const call: Call = { k, at: performance.now(), ended: null, outcome: null };
          this.calls.push(call);
          this.inFlight++;
          this.call(k)
            .catch((err: Error) => `caller failed: ${err.message}`)
            .then((outcome) => {
              Object.assign(call, { outcome, ended: performance.now() });
              this.inFlight--;
            });
        }
        await sleep(gapMs);
      }
    })();
  }

  protected ran(k: number): void {
    this.invoked.set(k, (this.invoked.get(k) ?? 0) + 1);
  }

  /** One callee connection to `node`, from connect to its close or `stopping`, whichever comes first. */
  protected abstract serve(node: BrokerNode): Promise<void>;
  /** One call; resolves with its outcome ('ok', 'wrong', or an error's name). */
  protected abstract call(k: number): Promise<string>;
  /** Ends the caller's connection, if it has one. */
  protected abstract closeCaller(): void;

  /**
   * Stops calling, waits up to `graceMs` for the calls in flight, then ends both sides (a side that
   * does not end within a few seconds is left: the run's report must not wait on a client library).
   */
  async stop(graceMs: number): Promise<void> {
    this.callsStopped = true;
    await this.calling;
    const deadline = performance.now() + graceMs;
    while (this.inFlight > 0 && performance.now() < deadline) await sleep(100);
    this.stopped = true;
    this.stopping.resolve(true);
    this.closeCaller();
    await Promise.race([this.serving, sleep(10_000)]);
  }

  stats(): CallStats {
    const errors: Record<string, number> = {};
    let slowestErrorMs = 0;
    for (const call of this.calls) {
      if (call.outcome === null || ['ok', 'wrong', NO_ANSWER].includes(call.outcome)) continue;
      errors[call.outcome] = (errors[call.outcome] ?? 0) + 1;
      slowestErrorMs = Math.max(slowestErrorMs, (call.ended ?? call.at) - call.at);
    }
    const ok = this.calls.filter((call) => call.outcome === 'ok');
    return {
      calls: this.calls.length,
      ok: ok.length,
      wrong: this.calls.filter((call) => call.outcome === 'wrong').length,
      unanswered: this.calls.filter((call) => call.outcome === null || call.outcome === NO_ANSWER).length,
      errors,
      slowestErrorMs: Math.round(slowestErrorMs),
      invokedTwice: [...this.invoked.values()].filter((times) => times > 1).length,
      lastOkAt: Math.max(0, ...ok.map((call) => call.ended ?? 0)),
      longestOutage: longestOutage(this.calls, this.callees),
    };
  }
}

interface WampyError {
  readonly errorUri?: string;
}

/**
 * WAMP calls across nodes: the caller on the anchor calls `uri` with [k]; the callee (wampy, pinging
 * its router as autobahn's auto_ping does) registers it on the other nodes in turn and echoes k.
 */
export class WampCalls extends CallWorkload {
  private caller: Promise<Wampy> | null = null;

  constructor(
    private readonly anchor: BrokerNode,
    nodes: () => readonly BrokerNode[],
    private readonly uri: string,
  ) {
    super(nodes);
  }

  protected async serve(node: BrokerNode): Promise<void> {
    const closed = deferred<true>();
    const wampy = await connectWampy(`${node.url}/ws`, {
      onClose: () => closed.resolve(true),
      onError: () => closed.resolve(true),
    });
    const ws = (wampy as unknown as { _ws: WebSocket })._ws;
    const ping = keepAlive(ws);
    let open = true;
    void closed.promise.then(() => (open = false));
    try {
      // The registration of its connection before may still be held (its node not yet counted dead).
      // A node may let the session go instead of answering (cut off from NATS): wampy never settles a
      // REGISTER on a closed session, so the close ends the attempt, and the device connects again.
      for (let registered = false; !registered && open && !this.stopped;) {
        registered = await Promise.race([
          wampy
            .register(this.uri, (input: { argsList?: unknown[] }) => {
              const k = Number(input.argsList?.[0]);
              this.ran(k);
              return { argsList: [k] };
            })
            .then(
              () => true,
              () => false,
            ),
          closed.promise.then(() => false),
        ]);
        if (!registered) await Promise.race([sleep(250), closed.promise, this.stopping.promise]);
      }
      await Promise.race([closed.promise, this.stopping.promise]);
    } finally {
      clearInterval(ping);
      // At the end of a run, or after the close: no GOODBYE to wait for.
      ws.terminate();
    }
  }

  protected async call(k: number): Promise<string> {
    this.caller ??= connectWampy(`${this.anchor.url}/ws`, { onClose: () => (this.caller = null) }).catch(
      (err: Error) => {
        this.caller = null;
        throw err;
      },
    );
    try {
      const result = (await (await this.caller).call(this.uri, [k])) as { argsList?: unknown[] };
      return result.argsList?.[0] === k ? 'ok' : 'wrong';
    } catch (err) {
      return (err as WampyError).errorUri ?? (err as Error).message;
    }
  }

  protected closeCaller(): void {
    this.caller
      ?.then((wampy) => (wampy as unknown as { _ws: WebSocket })._ws.terminate())
      .catch(() => undefined);
  }
}

/**
 * OCPP calls across nodes: the admin API on the anchor calls DataTransfer with data k on a charge point
 * (ocpp-rpc, strict, pinging every second) that connects to the other nodes in turn and echoes k.
 */
export class OcppCalls extends CallWorkload {
  constructor(
    private readonly anchor: BrokerNode,
    nodes: () => readonly BrokerNode[],
    private readonly identity: string,
    /** How long an admin call may take before it counts as unanswered. */
    private readonly answerWithinMs: number,
  ) {
    super(nodes);
  }

  protected async serve(node: BrokerNode): Promise<void> {
    const cp = new RPCClient({
      endpoint: `${node.url}/ocpp`,
      identity: this.identity,
      protocols: ['ocpp1.6'],
      strictMode: true,
      reconnect: false,
      callTimeoutMs: 3000,
      pingIntervalMs: PING_MS,
    } as ConstructorParameters<typeof RPCClient>[0]);
    const closed = new Promise<void>((resolve) => cp.once('close', () => resolve()));
    cp.handle('DataTransfer', async ({ params }) => {
      const { data } = params as { data?: string };
      this.ran(Number(data));
      return { status: 'Accepted', data };
    });
    try {
      await cp.connect();
      await cp.call('BootNotification', BOOT).catch(() => undefined);
      await Promise.race([closed, this.stopping.promise]);
    } finally {
      void cp.close({ force: true }).catch(() => undefined);
    }
  }

  protected async call(k: number): Promise<string> {
    const res = await fetch(
      `${this.anchor.http}/admin/v1/charge-points/${this.identity}/calls/DataTransfer`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ vendorId: 'chaos', data: String(k) }),
        signal: AbortSignal.timeout(this.answerWithinMs),
      },
    ).catch(() => null);
    if (res === null) return NO_ANSWER;
    const body = (await res.json().catch(() => ({}))) as { data?: string; title?: string };
    if (res.status === 200) return body.data === String(k) ? 'ok' : 'wrong';
    return `${res.status} ${body.title ?? ''}`.trim();
  }

  protected closeCaller(): void {
    // Each call is a request of its own: nothing stays open.
  }
}

/** Pings `ws` every PING_MS and ends it when a ping went unanswered (a paused router). */
function keepAlive(ws: WebSocket): NodeJS.Timeout {
  let answered = true;
  ws.on('pong', () => (answered = true));
  return setInterval(() => {
    if (!answered) {
      ws.terminate();
      return;
    }
    answered = false;
    ws.ping();
  }, PING_MS);
}
