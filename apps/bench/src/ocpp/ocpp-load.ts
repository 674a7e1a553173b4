import { WebSocket } from 'ws';
import { inBatches, withTimeout } from '../protocol-bench/async-util.js';
import { CpuWindow, type CpuShares } from '../protocol-bench/cpu-window.js';
import { addError } from '../protocol-bench/markdown.js';
import { summarizeLatencies } from '../stats.js';
import { callFrame, checkCallResult, type BenchAction } from './ocpp-frames.js';

export interface OcppLoadOptions {
  readonly baseUrl: string;
  readonly serverPid: number;
  readonly chargePoints: number;
  readonly warmupMs: number;
  readonly durationMs: number;
  readonly timeoutMs: number;
}

export interface OcppLoadResult {
  /** Correct CALLRESULTs received in the measured window, per second. */
  readonly callsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpu: CpuShares;
  readonly errors: ReadonlyMap<string, number>;
  /** Per charge point, the reading of each MeterValues answered (warm-up included): what must be stored. */
  readonly answered: ReadonlyMap<string, readonly number[]>;
}

const CONNECT_PARALLEL = 50;

/**
 * A raw `ws` charge point: JSON frames built by string concatenation, no RPCClient (its schema
 * checks and promise machinery per call would make the load generator the bottleneck). Like a real
 * one it has at most one CALL outstanding (OCPP-J section 4.1.1).
 */
class ChargePoint {
  private pending: { id: string; action: BenchAction; sentAt: number; resolve: () => void } | null = null;
  private counter = 0;
  /** The reading of each MeterValues answered (the call's number). */
  readonly answeredReadings: number[] = [];

  constructor(
    readonly identity: string,
    private readonly ws: WebSocket,
    private readonly onError: (label: string) => void,
  ) {
    ws.on('message', (data: Buffer) => this.onMessage(data.toString('utf8')));
  }

  static async connect(
    baseUrl: string,
    identity: string,
    timeoutMs: number,
    onError: (label: string) => void,
  ): Promise<ChargePoint> {
    const ws = new WebSocket(`${baseUrl}/${identity}`, 'ocpp1.6', {
      perMessageDeflate: false,
      handshakeTimeout: timeoutMs,
    });
    try {
      await withTimeout(
        new Promise<void>((resolve, reject) => {
          ws.once('open', resolve);
          ws.once('error', reject);
        }),
        timeoutMs,
        'WebSocket open',
      );
    } catch (err) {
      ws.terminate();
      throw err;
    }
    if (ws.protocol !== 'ocpp1.6') {
      ws.terminate();
      throw new Error(`subprotocol "${ws.protocol}" selected, not ocpp1.6`);
    }
    ws.on('close', (code) => onError(`connection closed (${code})`));
    ws.on('error', (err) => onError(`socket error: ${err.message}`));
    return new ChargePoint(identity, ws, onError);
  }

  /**
   * Sends one CALL; resolves when its correct answer arrived. A wrong answer is counted and leaves the
   * call outstanding, so the run's deadline reports it too.
   */
  call(action: BenchAction, timestamp: string, onAnswer: (latencyMs: number) => void): Promise<void> {
    const reading = ++this.counter;
    const id = String(reading);
    return new Promise((resolve) => {
      const sentAt = performance.now();
      this.pending = {
        id,
        action,
        sentAt,
        resolve: () => {
          if (action === 'MeterValues') this.answeredReadings.push(reading);
          onAnswer(performance.now() - sentAt);
          resolve();
        },
      };
      this.ws.send(callFrame(id, action, timestamp, reading));
    });
  }

  get outstanding(): boolean {
    return this.pending !== null;
  }

  /** A clean close (1000), or a terminate when the server does not complete it in time. */
  async close(timeoutMs: number): Promise<void> {
    this.ws.removeAllListeners('close');
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    this.ws.close(1000);
    await withTimeout(closed, timeoutMs, 'close').catch(() => this.ws.terminate());
  }

  private onMessage(text: string): void {
    const pending = this.pending;
    if (pending === null) {
      this.onError('frame while no CALL was outstanding');
      return;
    }
    const problem = checkCallResult(text, pending.id, pending.action);
    if (problem !== null) {
      this.onError(problem);
      return;
    }
    this.pending = null;
    pending.resolve();
  }
}

/**
 * Connects and boots every charge point, then each one alternates Heartbeat and MeterValues, the
 * next CALL as soon as the last is answered, through warm-up and the measured window; then waits for
 * the last answers and closes.
 */
export async function runOcppLoad(options: OcppLoadOptions, identityPrefix: string): Promise<OcppLoadResult> {
  const errors = new Map<string, number>();
  const onError = (label: string): void => addError(errors, label);
  const timestamp = new Date().toISOString();
  const chargePoints: ChargePoint[] = [];
  try {
    await inBatches(options.chargePoints, CONNECT_PARALLEL, async (i) => {
      const identity = `${identityPrefix}-${String(i).padStart(5, '0')}`;
      const cp = await ChargePoint.connect(options.baseUrl, identity, options.timeoutMs, onError);
      chargePoints.push(cp);
      await withTimeout(
        cp.call('BootNotification', timestamp, () => undefined),
        options.timeoutMs,
        'boot',
      );
    });

    const latencies: number[] = [];
    const cpu = new CpuWindow(options.serverPid);
    const started = performance.now();
    const windowStart = started + options.warmupMs;
    const windowEnd = windowStart + options.durationMs;
    const startTimer = setTimeout(() => cpu.start(), options.warmupMs);
    // The loops may finish a moment before the window's timer fires: the CPU reading must wait for it.
    const windowClosed = new Promise<void>((resolve) =>
      setTimeout(() => {
        cpu.stop();
        resolve();
      }, options.warmupMs + options.durationMs),
    );
    const record = (latencyMs: number): void => {
      const now = performance.now();
      if (now >= windowStart && now < windowEnd) latencies.push(latencyMs);
    };
    const loop = async (cp: ChargePoint, index: number): Promise<void> => {
      // Half start with MeterValues, so the mix is even from the first call on.
      let meter = index % 2 === 0;
      while (performance.now() < windowEnd) {
        await cp.call(meter ? 'MeterValues' : 'Heartbeat', timestamp, record);
        meter = !meter;
      }
    };
    const loops = Promise.all(chargePoints.map(loop));
    await withTimeout(loops, options.warmupMs + options.durationMs + options.timeoutMs, 'last answers').catch(
      () => addError(errors, 'no answer in time', chargePoints.filter((cp) => cp.outstanding).length),
    );
    clearTimeout(startTimer);
    await windowClosed;
    const latency = summarizeLatencies(latencies);
    return {
      callsPerSec: latencies.length / (options.durationMs / 1000),
      p50Ms: latency.p50,
      p99Ms: latency.p99,
      cpu: cpu.shares,
      errors,
      answered: new Map(chargePoints.map((cp) => [cp.identity, cp.answeredReadings])),
    };
  } finally {
    await inBatches(chargePoints.length, 200, (i) =>
      (chargePoints[i] as ChargePoint).close(options.timeoutMs),
    );
  }
}
