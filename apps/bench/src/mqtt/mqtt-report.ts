import { errorTotal, fixed, markdownTable, percent, times } from '../protocol-bench/markdown.js';
import { median } from '../stats.js';
import { type MqttServerKind } from './mqtt-servers.js';
import { type LatencyRow, type MemoryRow, type Scenario, type ThroughputRow } from './mqtt-rounds.js';

export const TARGETS = { qos0VsMosquitto: 1.0, qos1VsMosquitto: 1.0, vsAedes: 1.5, memoryVsMosquitto: 1.2 };

export function throughputRoundsTable(rows: readonly ThroughputRow[]): string {
  return markdownTable(
    [
      'round',
      'server',
      'scenario',
      'messages delivered/s',
      'server CPU',
      'server CPU µs/message',
      'client CPU',
      'errors',
    ],
    'rllrrrrr',
    rows.map((r) => [
      String(r.round),
      r.server,
      r.scenario.label,
      fixed(r.deliveriesPerSec, 0),
      percent(r.cpu.server),
      fixed(r.serverCpuUsPerMessage, 1),
      percent(r.cpu.client),
      String(errorTotal(r.errors)),
    ]),
  );
}

export function latencyRoundsTable(rows: readonly LatencyRow[]): string {
  return markdownTable(
    [
      'round',
      'server',
      'scenario',
      'offered msg/s',
      'p50 ms',
      'p99 ms',
      'server CPU',
      'client CPU',
      'errors',
    ],
    'rllrrrrrr',
    rows.map((r) => [
      String(r.round),
      r.server,
      r.scenario.label,
      String(r.offeredRate),
      fixed(r.p50Ms, 2),
      fixed(r.p99Ms, 2),
      percent(r.cpu.server),
      percent(r.cpu.client),
      String(errorTotal(r.errors)),
    ]),
  );
}

export function memoryRoundsTable(rows: readonly MemoryRow[]): string {
  return markdownTable(
    ['round', 'server', 'idle connections', 'RSS before KiB', 'RSS after KiB', 'bytes/connection', 'errors'],
    'rlrrrrr',
    rows.map((r) => [
      String(r.round),
      r.server,
      String(r.connections),
      String(r.baselineKiB),
      String(r.loadedKiB),
      fixed(bytesPerConnection(r), 0),
      String(errorTotal(r.errors)),
    ]),
  );
}

export function bytesPerConnection(row: MemoryRow): number {
  return ((row.loadedKiB - row.baselineKiB) * 1024) / row.connections;
}

/** The median of one measure over the rows of one server. */
export function medianBy<T extends { server: string }>(
  rows: readonly T[],
  server: MqttServerKind,
  value: (row: T) => number,
): number {
  return median(rows.filter((r) => r.server === server).map(value));
}

/** Errors counted in the rows of these servers. */
function errorsOf(
  rows: readonly { server: string; errors: ReadonlyMap<string, number> }[],
  ...servers: MqttServerKind[]
): number {
  return rows
    .filter((r) => servers.some((server) => server === r.server))
    .reduce((n, r) => n + errorTotal(r.errors), 0);
}

export interface Verdicts {
  readonly lines: string[];
  readonly allMet: boolean;
}

/** Medians per scenario and server with the ratios the targets are stated in, and a verdict per target. */
export function summary(
  scenarios: readonly Scenario[],
  throughput: readonly ThroughputRow[],
  latency: readonly LatencyRow[],
  memory: readonly MemoryRow[],
): { tables: string; verdicts: Verdicts } {
  const lines: string[] = [];
  let allMet = true;
  // A ratio resting on rows with errors (a message lost, repeated or out of order, at any QoS, on
  // either side) measures a broken run: it is never "met", however it reads.
  const verdict = (
    what: string,
    value: number,
    target: number,
    higherIsBetter: boolean,
    errors: number,
  ): void => {
    const met = (higherIsBetter ? value >= target : value <= target) && errors === 0;
    allMet &&= met;
    const erred = errors > 0 ? ` with ${errors} errors in its rows` : '';
    lines.push(
      `- ${what}: ${value.toFixed(2)}× (target ${higherIsBetter ? '≥' : '≤'} ${target})${erred}: ${met ? 'met' : '**NOT met**'}`,
    );
  };

  const rateRows = scenarios.map((scenario) => {
    const mine = throughput.filter((r) => r.scenario.id === scenario.id);
    const [broker, mosquitto, aedes] = (['broker', 'mosquitto', 'aedes'] as const).map((server) =>
      medianBy(mine, server, (r) => r.deliveriesPerSec),
    ) as [number, number, number];
    verdict(
      `${scenario.label}: broker / Mosquitto`,
      broker / mosquitto,
      scenario.qos === 0 ? TARGETS.qos0VsMosquitto : TARGETS.qos1VsMosquitto,
      true,
      errorsOf(mine, 'broker', 'mosquitto'),
    );
    verdict(
      `${scenario.label}: broker / Aedes`,
      broker / aedes,
      TARGETS.vsAedes,
      true,
      errorsOf(mine, 'broker', 'aedes'),
    );
    return [
      scenario.label,
      fixed(broker, 0),
      fixed(mosquitto, 0),
      fixed(aedes, 0),
      `**${times(broker, mosquitto)}**`,
      `**${times(broker, aedes)}**`,
    ];
  });
  const cpuRows = scenarios.map((scenario) => {
    const mine = throughput.filter((r) => r.scenario.id === scenario.id && r.serverCpuUsPerMessage !== null);
    const [broker, mosquitto, aedes] = (['broker', 'mosquitto', 'aedes'] as const).map((server) =>
      medianBy(mine, server, (r) => r.serverCpuUsPerMessage ?? Number.NaN),
    ) as [number, number, number];
    return [
      scenario.label,
      fixed(broker, 1),
      fixed(mosquitto, 1),
      fixed(aedes, 1),
      times(broker, mosquitto),
      times(broker, aedes),
    ];
  });
  const latencyRows = scenarios
    .filter((s) => latency.some((r) => r.scenario.id === s.id))
    .map((scenario) => {
      const mine = latency.filter((r) => r.scenario.id === scenario.id);
      const [broker, mosquitto, aedes] = (['broker', 'mosquitto', 'aedes'] as const).map((server) =>
        medianBy(mine, server, (r) => r.p99Ms),
      ) as [number, number, number];
      return [
        `${scenario.label}, 10 % of peak`,
        fixed(broker, 2),
        fixed(mosquitto, 2),
        fixed(aedes, 2),
        times(broker, mosquitto),
        times(broker, aedes),
      ];
    });
  const [brokerMem, mosquittoMem, aedesMem] = (['broker', 'mosquitto', 'aedes'] as const).map((server) =>
    medianBy(memory, server, bytesPerConnection),
  ) as [number, number, number];
  verdict(
    'memory per idle connection: broker / Mosquitto',
    brokerMem / mosquittoMem,
    TARGETS.memoryVsMosquitto,
    false,
    errorsOf(memory, 'broker', 'mosquitto'),
  );

  const tables = [
    markdownTable(
      [
        'median of rounds: messages delivered/s',
        'broker',
        'Mosquitto',
        'Aedes',
        'broker / Mosquitto',
        'broker / Aedes',
      ],
      'lrrrrr',
      rateRows,
    ),
    '',
    markdownTable(
      [
        'median of rounds: server CPU µs/message',
        'broker',
        'Mosquitto',
        'Aedes',
        'broker / Mosquitto',
        'broker / Aedes',
      ],
      'lrrrrr',
      cpuRows,
    ),
    '',
    markdownTable(
      [
        'median of rounds: p99 latency ms',
        'broker',
        'Mosquitto',
        'Aedes',
        'broker / Mosquitto',
        'broker / Aedes',
      ],
      'lrrrrr',
      latencyRows,
    ),
    '',
    markdownTable(
      ['median of rounds', 'broker', 'Mosquitto', 'Aedes', 'broker / Mosquitto', 'broker / Aedes'],
      'lrrrrr',
      [
        [
          'memory per idle connection, bytes',
          fixed(brokerMem, 0),
          fixed(mosquittoMem, 0),
          fixed(aedesMem, 0),
          `**${times(brokerMem, mosquittoMem)}**`,
          times(brokerMem, aedesMem),
        ],
      ],
    ),
  ].join('\n');
  return { tables, verdicts: { lines, allMet } };
}

/** Every error by server, scenario and label: a broken server must not pass as a fast one. */
export function errorsList(
  rows: readonly { server: string; label: string; errors: ReadonlyMap<string, number> }[],
): string {
  const totals = new Map<string, number>();
  for (const r of rows) {
    for (const [label, count] of r.errors) {
      const key = `${r.server}, ${r.label}: ${label}`;
      totals.set(key, (totals.get(key) ?? 0) + count);
    }
  }
  if (totals.size === 0)
    return 'Errors: none (every message arrived once, in order; every QoS 1 message was acknowledged).';
  return ['Errors:', ...[...totals].map(([key, count]) => `- ${key} × ${count}`)].join('\n');
}
