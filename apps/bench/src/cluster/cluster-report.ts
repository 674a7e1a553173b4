import { errorTotal, fixed, markdownTable, percent, times } from '../protocol-bench/markdown.js';
import { median } from '../stats.js';
import { type Shape } from './cluster-options.js';
import { SETUP_IDS, SETUP_LABELS, type SetupId } from './cluster-setups.js';

/** Cluster mode on purely local traffic keeps at least this share of the single process's rate. */
export const LOCAL_TARGET = 0.8;

export interface ClusterRow {
  readonly round: number;
  readonly setup: SetupId;
  readonly shape: Shape;
  readonly deliveriesPerSec: number;
  /** CPU of every broker process of the set-up over the window, summed, as a share of one core. */
  readonly brokerCpu: number | null;
  readonly brokerCpuUsPerMessage: number | null;
  /** The load generator's (this process's) share of a core. */
  readonly clientCpu: number;
  /** Messages sent, and first receipts summed over subscribers, over the whole run (warm-up included). */
  readonly published: number;
  readonly received: number;
  readonly errors: ReadonlyMap<string, number>;
  /** The box's 1-minute load average when the round ended. */
  readonly loadAverage: number;
}

export function roundsTable(rows: readonly ClusterRow[]): string {
  return markdownTable(
    [
      'round',
      'shape',
      'set-up',
      'messages delivered/s',
      'broker CPU',
      'broker CPU µs/message',
      'client CPU',
      'sent × subscribers',
      'received',
      'errors',
      'load avg',
    ],
    'rllrrrrrrrr',
    rows.map((r) => [
      String(r.round),
      r.shape.label,
      SETUP_LABELS[r.setup],
      fixed(r.deliveriesPerSec, 0),
      percent(r.brokerCpu),
      fixed(r.brokerCpuUsPerMessage, 2),
      percent(r.clientCpu),
      String(r.published * r.shape.subscribers),
      String(r.received),
      String(errorTotal(r.errors)),
      fixed(r.loadAverage, 1),
    ]),
  );
}

interface SetupSummary {
  readonly rate: number;
  readonly cpuUs: number | null;
  readonly errors: number;
  /** This set-up's rate over (a)'s in the same round, per round. */
  readonly pairedRatios: readonly number[];
  /**
   * The median of pairedRatios: what the verdict uses. A round's set-ups run seconds apart, so on a box
   * whose other load comes and goes the pairs share their conditions more often than the medians do.
   */
  readonly ratio: number;
}

type ShapeSummary = Record<SetupId, SetupSummary>;

function summarizeShape(rows: readonly ClusterRow[]): ShapeSummary {
  const rateOf = (setup: SetupId, round: number): number | undefined =>
    rows.find((r) => r.setup === setup && r.round === round)?.deliveriesPerSec;
  const summary = (setup: SetupId): SetupSummary => {
    const mine = rows.filter((r) => r.setup === setup);
    const cpu = mine.map((r) => r.brokerCpuUsPerMessage).filter((v): v is number => v !== null);
    const pairedRatios: number[] = [];
    for (const row of mine) {
      const single = rateOf('a', row.round);
      if (single !== undefined && single > 0) pairedRatios.push(row.deliveriesPerSec / single);
    }
    return {
      rate: median(mine.map((r) => r.deliveriesPerSec)),
      cpuUs: cpu.length === mine.length && cpu.length > 0 ? median(cpu) : null,
      errors: mine.reduce((sum, r) => sum + errorTotal(r.errors), 0),
      pairedRatios,
      ratio: median(pairedRatios),
    };
  };
  return { a: summary('a'), b: summary('b'), c: summary('c') };
}

/** Medians per shape and set-up, with the ratios to (a): rate (higher is better), CPU per message (lower). */
export function summaryTable(shapes: readonly Shape[], rows: readonly ClusterRow[]): string {
  const lines: string[][] = [];
  for (const shape of shapes) {
    const summaries = summarizeShape(rows.filter((r) => r.shape.label === shape.label));
    const single = summaries.a;
    for (const id of SETUP_IDS) {
      const s = summaries[id];
      const paired = s.pairedRatios;
      lines.push([
        shape.label,
        SETUP_LABELS[id],
        fixed(s.rate, 0),
        id === 'a' ? '' : `**${fixed(s.ratio, 2)}×**`,
        id === 'a' || paired.length === 0
          ? ''
          : `${Math.min(...paired).toFixed(2)}× to ${Math.max(...paired).toFixed(2)}×`,
        fixed(s.cpuUs, 2),
        id === 'a' ? '' : times(s.cpuUs, single.cpuUs),
        String(s.errors),
      ]);
    }
  }
  return markdownTable(
    [
      'shape',
      'set-up (median of rounds)',
      'messages delivered/s',
      '/ (a), median of rounds',
      '/ (a), range',
      'broker CPU µs/message',
      '/ (a)',
      'errors',
    ],
    'llrrrrrr',
    lines,
  );
}

/**
 * The verdict lines per shape: (b)/(a) against its target, (c)/(a) as a figure. A ratio over rounds
 * with any error (a lost message, a closed connection) is never "met".
 */
export function verdicts(shapes: readonly Shape[], rows: readonly ClusterRow[]): string[] {
  const lines: string[] = [];
  for (const shape of shapes) {
    const summaries = summarizeShape(rows.filter((r) => r.shape.label === shape.label));
    const { b, c } = summaries;
    const errorsIn = (ids: readonly SetupId[]): number => ids.reduce((n, id) => n + summaries[id].errors, 0);
    const local = b.ratio;
    const localErrors = errorsIn(['a', 'b']);
    const localVerdict =
      localErrors > 0
        ? `NOT met: ${localErrors} errors in the (a) and (b) rounds, so the rates do not count.`
        : local >= LOCAL_TARGET
          ? 'met.'
          : 'NOT met.';
    const spreadErrors = errorsIn(['a', 'c']);
    lines.push(
      `${shape.label}, median of the per-round ratios: cluster mode on local traffic (b) / (a) = ${local.toFixed(2)}× ` +
        `(target ≥ ${LOCAL_TARGET}): ${localVerdict} Across two nodes (c) / (a) = ${c.ratio.toFixed(2)}× ` +
        (spreadErrors > 0
          ? `(no target), but with ${spreadErrors} errors in the (a) and (c) rounds: not a result.`
          : '(no target).'),
      '',
    );
  }
  return lines;
}

/** Every failure by shape, set-up and label. */
export function errorsList(rows: readonly ClusterRow[]): string {
  const totals = new Map<string, number>();
  for (const row of rows) {
    for (const [label, count] of row.errors) {
      const key = `${row.shape.label}, ${SETUP_LABELS[row.setup]}: ${label}`;
      totals.set(key, (totals.get(key) ?? 0) + count);
    }
  }
  if (totals.size === 0) {
    return (
      'Errors: none (every subscriber received every message once, in order, and received = sent × ' +
      'subscribers in every round).'
    );
  }
  return ['Errors:', ...[...totals].map(([key, count]) => `- ${key} × ${count}`)].join('\n');
}
