import { type CpuShares } from './cpu-window.js';
import { median } from './stats.js';

/** One measured round against one server; `rate` counts operations (handshakes, messages, calls) per second. */
export interface RoundResult extends CpuShares {
  readonly server: string;
  readonly round: number;
  readonly rate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: ReadonlyMap<string, number>;
  /** The box's 1-minute load average when the round ended: how busy its neighbours kept the cores. */
  readonly loadAverage: number;
}

export interface Summary {
  readonly server: string;
  readonly rate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly serverCpuUsPerOp: number | null;
  readonly errors: number;
}

export function summarize(server: string, results: readonly RoundResult[]): Summary {
  const mine = results.filter((r) => r.server === server);
  const cpu = mine.map((r) => r.serverCpuUsPerOp).filter((v): v is number => v !== null);
  return {
    server,
    rate: median(mine.map((r) => r.rate)),
    p50Ms: median(mine.map((r) => r.p50Ms)),
    p99Ms: median(mine.map((r) => r.p99Ms)),
    serverCpuUsPerOp: cpu.length === mine.length ? median(cpu) : null,
    errors: mine.reduce((sum, r) => sum + errorCount(r), 0),
  };
}

/** `unit` names one operation in the column headers: handshake, message, call. */
export function roundsTable(results: readonly RoundResult[], unit: string): string {
  const rows = results.map((r) =>
    row([
      String(r.round),
      r.server,
      fixed(r.rate, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(errorCount(r)),
      percent(r.serverCpuShare),
      r.serverCpuUsPerOp === null ? 'n/a' : fixed(r.serverCpuUsPerOp, 1),
      percent(r.clientCpuShare),
      fixed(r.loadAverage, 1),
    ]),
  );
  return [
    row([
      'round',
      'server',
      `${unit}s/s`,
      'p50 ms',
      'p99 ms',
      'errors',
      'server CPU',
      `server CPU µs/${unit}`,
      'client CPU',
      'load avg',
    ]),
    row(['---:', ':---', '---:', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...rows,
  ].join('\n');
}

/** Medians per server and ours/reference ratios (rate: higher is better; p99 and CPU: lower is better). */
export function summaryTable(reference: Summary, ours: Summary, unit: string): string {
  const cpuRatio =
    reference.serverCpuUsPerOp === null || ours.serverCpuUsPerOp === null
      ? 'n/a'
      : ratio(ours.serverCpuUsPerOp, reference.serverCpuUsPerOp);
  const line = (s: Summary): string =>
    row([
      s.server,
      fixed(s.rate, 0),
      fixed(s.p50Ms, 2),
      fixed(s.p99Ms, 2),
      s.serverCpuUsPerOp === null ? 'n/a' : fixed(s.serverCpuUsPerOp, 1),
      String(s.errors),
    ]);
  return [
    row(['median of rounds', `${unit}s/s`, 'p50 ms', 'p99 ms', `server CPU µs/${unit}`, 'errors']),
    row([':---', '---:', '---:', '---:', '---:', '---:']),
    line(reference),
    line(ours),
    row([
      `**${ours.server} / ${reference.server}**`,
      `**${ratio(ours.rate, reference.rate)}**`,
      ratio(ours.p50Ms, reference.p50Ms),
      `**${ratio(ours.p99Ms, reference.p99Ms)}**`,
      cpuRatio,
      '',
    ]),
  ].join('\n');
}

/** The rate ratio against its target, as the report's verdict line; a run that counted errors never reads as met. */
export function verdict(reference: Summary, ours: Summary, unit: string, target: number): string {
  const rateRatio = ours.rate / reference.rate;
  const errors = ours.errors + reference.errors;
  const outcome =
    errors > 0 ? `NOT met: the run counted ${errors} errors.` : rateRatio >= target ? 'met.' : 'NOT met.';
  return `${ours.server} ${unit}s/s = ${rateRatio.toFixed(2)} × ${reference.server} (target ≥ ${target}): ${outcome}`;
}

/** Every failure by server and label: a broken server must not pass as a fast one. */
export function errorsList(results: readonly RoundResult[], noneText: string): string {
  const totals = new Map<string, number>();
  for (const r of results) {
    for (const [label, count] of r.errors) {
      const key = `${r.server}: ${label}`;
      totals.set(key, (totals.get(key) ?? 0) + count);
    }
  }
  if (totals.size === 0) return `Errors: none (${noneText}).`;
  return ['Errors:', ...[...totals].map(([key, count]) => `- ${key} × ${count}`)].join('\n');
}

export function errorCount(r: RoundResult): number {
  let total = 0;
  for (const count of r.errors.values()) total += count;
  return total;
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function fixed(value: number, digits: number): string {
  return Number.isNaN(value) ? 'n/a' : value.toFixed(digits);
}

function percent(share: number | null): string {
  return share === null ? 'n/a' : `${Math.round(share * 100)} %`;
}

function ratio(numerator: number, denominator: number): string {
  return denominator > 0 ? `${(numerator / denominator).toFixed(2)}×` : 'n/a';
}

export interface ComparisonReport {
  readonly title: string;
  /** The machine and the settings, one paragraph. */
  readonly setup: string;
  readonly results: readonly RoundResult[];
  readonly reference: string;
  readonly ours: string;
  readonly unit: string;
  readonly target: number;
  /** What "no errors" means for this benchmark, for the errors line. */
  readonly noErrors: string;
}

/** The whole markdown report of one comparison: rounds, medians with ratios, verdict, errors. */
export function comparisonReport(report: ComparisonReport): string {
  const reference = summarize(report.reference, report.results);
  const ours = summarize(report.ours, report.results);
  return [
    `## ${report.title}`,
    '',
    report.setup,
    '',
    roundsTable(report.results, report.unit),
    '',
    summaryTable(reference, ours, report.unit),
    '',
    verdict(reference, ours, report.unit, report.target),
    '',
    errorsList(report.results, report.noErrors),
  ].join('\n');
}
