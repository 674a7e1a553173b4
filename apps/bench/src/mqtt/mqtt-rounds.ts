import { inBatches } from '../protocol-bench/async-util.js';
import { addError, errorTotal } from '../protocol-bench/markdown.js';
import { processRssKiB } from '../protocol-bench/process-memory.js';
import { BenchClient } from './bench-client.js';
import { type MqttServer } from './mqtt-servers.js';
import { type MqttBenchOptions } from './mqtt-options.js';
import { runTraffic, type TrafficResult } from './traffic.js';

export const TIMEOUT_MS = 10_000;
/** The latency runs offer this share of the peak that the same server reached in the same round. */
export const LATENCY_LOAD_SHARE = 0.1;

export interface Scenario {
  readonly id: string;
  readonly label: string;
  readonly qos: 0 | 1;
  readonly publishers: number;
  readonly subscribers: number;
  readonly window: number;
}

export function scenarios(options: MqttBenchOptions): Scenario[] {
  const fanIn = `${options.publishers} → 1`;
  const fanOut = `1 → ${options.fanout}`;
  const scenario = (qos: 0 | 1, fan: 'in' | 'out'): Scenario => ({
    id: `q${qos}-fan${fan}`,
    label: `QoS ${qos}, ${fan === 'in' ? fanIn : fanOut}`,
    qos,
    publishers: fan === 'in' ? options.publishers : 1,
    subscribers: fan === 'in' ? 1 : options.fanout,
    window: fan === 'in' ? options.window : options.fanoutWindow,
  });
  return [scenario(0, 'in'), scenario(1, 'in'), scenario(0, 'out'), scenario(1, 'out')];
}

export interface ThroughputRow extends TrafficResult {
  readonly round: number;
  readonly server: string;
  readonly scenario: Scenario;
}

export interface LatencyRow extends TrafficResult {
  readonly round: number;
  readonly server: string;
  readonly scenario: Scenario;
  /** Messages per second offered (LATENCY_LOAD_SHARE of this round's peak). */
  readonly offeredRate: number;
}

/** One round against one server: the four throughput runs, then the latency runs at 10 % of their fan-in peaks. */
export async function runServerRound(
  server: MqttServer,
  round: number,
  options: MqttBenchOptions,
): Promise<{ throughput: ThroughputRow[]; latency: LatencyRow[] }> {
  const throughput: ThroughputRow[] = [];
  const latency: LatencyRow[] = [];
  const common = {
    url: server.url,
    serverPid: server.process.pid,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    timeoutMs: TIMEOUT_MS,
    batchWrites: options.clientWrites === 'tick',
  };
  for (const scenario of scenarios(options)) {
    const result = await runTraffic({
      ...common,
      topic: `bench/${round}/${scenario.id}`,
      qos: scenario.qos,
      publishers: scenario.publishers,
      subscribers: scenario.subscribers,
      load: { kind: 'closed', window: scenario.window },
    });
    throughput.push({ ...result, round, server: server.kind, scenario });
    progress(round, server.kind, scenario.label, `${result.deliveriesPerSec.toFixed(0)} msg/s`, result);
  }
  for (const scenario of scenarios(options).filter((s) => s.subscribers === 1)) {
    const peak = throughput.find((row) => row.scenario.id === scenario.id)?.deliveriesPerSec ?? 0;
    const offeredRate = Math.max(1, Math.round(peak * LATENCY_LOAD_SHARE));
    const result = await runTraffic({
      ...common,
      topic: `bench/${round}/latency-${scenario.id}`,
      qos: scenario.qos,
      publishers: scenario.publishers,
      subscribers: 1,
      load: { kind: 'paced', rate: offeredRate },
    });
    latency.push({ ...result, round, server: server.kind, scenario, offeredRate });
    progress(
      round,
      server.kind,
      `latency ${scenario.label} at ${offeredRate}/s`,
      `p99 ${result.p99Ms.toFixed(2)} ms`,
      result,
    );
  }
  return { throughput, latency };
}

export interface MemoryRow {
  readonly round: number;
  readonly server: string;
  readonly connections: number;
  readonly baselineKiB: number;
  readonly loadedKiB: number;
  readonly errors: ReadonlyMap<string, number>;
}

/**
 * RSS of a freshly started server before and after `connections` idle MQTT sessions (CONNECT with
 * clean session, CONNACK, no subscription), each read after a settle time; the sessions must all
 * still be connected at the second reading.
 */
export async function measureIdleMemory(
  server: MqttServer,
  round: number,
  options: MqttBenchOptions,
): Promise<MemoryRow> {
  const errors = new Map<string, number>();
  await sleep(options.settleMs);
  const baselineKiB = processRssKiB(server.process.pid);
  const clients: BenchClient[] = [];
  try {
    await inBatches(options.idleConnections, 50, async (i) => {
      clients.push(
        await BenchClient.connect(
          server.url,
          `idle-${i}`,
          { onError: (label) => addError(errors, `idle connection: ${label}`) },
          TIMEOUT_MS,
        ),
      );
    });
    await sleep(options.settleMs);
    const loadedKiB = processRssKiB(server.process.pid);
    const row = { round, server: server.kind, connections: clients.length, baselineKiB, loadedKiB, errors };
    console.error(
      `memory round ${round} ${server.kind}: ${(((loadedKiB - baselineKiB) * 1024) / clients.length).toFixed(0)} ` +
        `bytes/connection (RSS ${baselineKiB} → ${loadedKiB} KiB)`,
    );
    return row;
  } finally {
    await inBatches(clients.length, 200, (i) => (clients[i] as BenchClient).close(TIMEOUT_MS));
  }
}

function progress(round: number, server: string, what: string, value: string, result: TrafficResult): void {
  const errors = errorTotal(result.errors);
  console.error(
    `round ${round} ${server}: ${what}: ${value}, server CPU ${Math.round((result.cpu.server ?? 0) * 100)} %, ` +
      `client CPU ${Math.round(result.cpu.client * 100)} %, ${errors} errors`,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
