import { type RoundResult } from './measure-round.js';
import { median } from './stats.js';

export interface Summary {
  readonly server: string;
  readonly rate: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly serverCpuUsPerHandshake: number | null;
  readonly errors: number;
}

export function summarize(server: string, results: readonly RoundResult[]): Summary {
  const mine = results.filter((r) => r.server === server);
  const cpu = mine.map((r) => r.serverCpuUsPerHandshake).filter((v): v is number => v !== null);
  return {
    server,
    rate: median(mine.map((r) => r.rate)),
    p50Ms: median(mine.map((r) => r.p50Ms)),
    p99Ms: median(mine.map((r) => r.p99Ms)),
    serverCpuUsPerHandshake: cpu.length === mine.length ? median(cpu) : null,
    errors: mine.reduce((sum, r) => sum + errorCount(r), 0),
  };
}

export function roundsTable(results: readonly RoundResult[]): string {
  const rows = results.map((r) =>
    row([
      String(r.round),
      r.server,
      fixed(r.rate, 0),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      String(errorCount(r)),
      percent(r.serverCpuShare),
      r.serverCpuUsPerHandshake === null ? 'n/a' : fixed(r.serverCpuUsPerHandshake, 0),
      percent(r.clientCpuShare),
    ]),
  );
  return [
    row([
      'round',
      'server',
      'handshakes/s',
      'p50 ms',
      'p99 ms',
      'errors',
      'server CPU',
      'server CPU µs/handshake',
      'client CPU',
    ]),
    row(['---:', ':---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
    ...rows,
  ].join('\n');
}

/** Medians per server and the broker/bare ratios (rate: higher is better; p99 and CPU: lower is better). */
export function summaryTable(bare: Summary, broker: Summary): string {
  const cpuRatio =
    bare.serverCpuUsPerHandshake === null || broker.serverCpuUsPerHandshake === null
      ? 'n/a'
      : ratio(broker.serverCpuUsPerHandshake, bare.serverCpuUsPerHandshake);
  const line = (s: Summary): string =>
    row([
      s.server,
      fixed(s.rate, 0),
      fixed(s.p50Ms, 2),
      fixed(s.p99Ms, 2),
      s.serverCpuUsPerHandshake === null ? 'n/a' : fixed(s.serverCpuUsPerHandshake, 0),
      String(s.errors),
    ]);
  return [
    row(['median of rounds', 'handshakes/s', 'p50 ms', 'p99 ms', 'server CPU µs/handshake', 'errors']),
    row([':---', '---:', '---:', '---:', '---:', '---:']),
    line(bare),
    line(broker),
    row([
      '**broker / bare**',
      `**${ratio(broker.rate, bare.rate)}**`,
      ratio(broker.p50Ms, bare.p50Ms),
      `**${ratio(broker.p99Ms, bare.p99Ms)}**`,
      cpuRatio,
      '',
    ]),
  ].join('\n');
}

/** Every failed handshake by server and label: a broken server must not pass as a fast one. */
export function errorsList(results: readonly RoundResult[]): string {
  const totals = new Map<string, number>();
  for (const r of results) {
    for (const [label, count] of r.errors) {
      const key = `${r.server}: ${label}`;
      totals.set(key, (totals.get(key) ?? 0) + count);
    }
  }
  if (totals.size === 0) return 'Errors: none (every response was a correct 101).';
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
