import { type ServerProcess } from '../child-servers.js';
import { runTraffic, type TrafficOptions, type TrafficResult } from '../mqtt/traffic.js';
import { CpuWindow } from '../protocol-bench/cpu-window.js';
import { addError } from '../protocol-bench/markdown.js';

/** A closed-loop run, checked, with the CPU of every process serving it over the measured window. */
export interface MeasuredTraffic {
  readonly result: TrafficResult;
  /** The run's own errors, plus a count mismatch or an empty window. */
  readonly errors: Map<string, number>;
  /** The processes' CPU summed, as a share of one core; null when one could not be read. */
  readonly cpu: number | null;
  readonly cpuUsPerMessage: number | null;
}

/** Runs `options` with fresh clients; received must equal sent × subscribers over the whole run. */
export async function measureTraffic(
  options: TrafficOptions,
  processes: readonly ServerProcess[],
): Promise<MeasuredTraffic> {
  const windows = processes.map((server) => new CpuWindow(server.pid));
  const result = await runTraffic({
    ...options,
    onWindowStart: () => windows.forEach((w) => w.start()),
    onWindowEnd: () => windows.forEach((w) => w.stop()),
  });
  const errors = new Map(result.errors);
  const expected = result.published * options.subscribers;
  if (result.received !== expected) {
    addError(errors, 'received ≠ sent × subscribers', Math.abs(expected - result.received));
  }
  if (result.deliveriesPerSec === 0) addError(errors, 'nothing delivered in the measured window');
  const sum = (values: readonly (number | null)[]): number | null =>
    values.every((v): v is number => v !== null) ? values.reduce((x, y) => x + y, 0) : null;
  const cpuMs = sum(windows.map((w) => w.shares.serverMs));
  const delivered = result.deliveriesPerSec * (options.durationMs / 1000);
  return {
    result,
    errors,
    cpu: sum(windows.map((w) => w.shares.server)),
    cpuUsPerMessage: cpuMs === null || delivered === 0 ? null : (cpuMs * 1000) / delivered,
  };
}

/** Before any timing: messages must flow, each one to every subscriber; throws naming `label` otherwise. */
export async function preflightTraffic(label: string, options: TrafficOptions): Promise<void> {
  const result = await runTraffic(options);
  const expected = result.published * options.subscribers;
  const failures = [...result.errors].map(([error, count]) => `${error} × ${count}`);
  if (result.published === 0 || result.received !== expected) {
    failures.push(
      `sent ${result.published} × ${options.subscribers} subscribers, received ${result.received}`,
    );
  }
  if (failures.length > 0) throw new Error(`${label}: preflight failed: ${failures.join('; ')}`);
}
