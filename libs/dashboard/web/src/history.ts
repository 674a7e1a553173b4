import type { Snapshot } from '../../src/snapshot.types.js';

/** Five minutes of one-second snapshots. */
const HISTORY_LENGTH = 300;

/** Series for one chart: x in seconds since the epoch (uPlot's scale), one y array per label. */
export interface Series {
  readonly x: number[];
  readonly labels: string[];
  readonly ys: (number | null)[][];
}

/** The statuses the handshake chart always shows, in this order; others join after them. */
const STATUSES = ['101', '400', '401', '403', '426', '429', '503', 'plain'];

export function appendSnapshot(history: readonly Snapshot[], next: Snapshot): Snapshot[] {
  const kept = history.length >= HISTORY_LENGTH ? history.slice(1 - HISTORY_LENGTH) : [...history];
  kept.push(next);
  return kept;
}

function build(
  history: readonly Snapshot[],
  keys: string[],
  value: (s: Snapshot, key: string) => number | null,
): Series {
  return {
    x: history.map((s) => s.at / 1000),
    labels: keys,
    ys: keys.map((key) => history.map((s) => value(s, key))),
  };
}

/** Per second from two counts since start; null across a restart (a count that went down). */
function rate(history: readonly Snapshot[], i: number, count: (s: Snapshot) => number): number | null {
  const now = history[i];
  const before = history[i - 1];
  if (now === undefined || before === undefined) return null;
  const delta = count(now) - count(before);
  const seconds = (now.at - before.at) / 1000;
  return delta < 0 || seconds <= 0 ? null : delta / seconds;
}

export function connectionSeries(history: readonly Snapshot[]): Series {
  const keys = [
    ...new Set(history.flatMap((s) => s.connections.map((c) => `${c.endpoint} ${c.subprotocol}`))),
  ];
  return build(history, keys, (s, key) => {
    const found = s.connections.find((c) => `${c.endpoint} ${c.subprotocol}` === key);
    return found?.open ?? 0;
  });
}

export function handshakeSeries(history: readonly Snapshot[]): Series {
  const seen = new Set(history.flatMap((s) => Object.keys(s.handshakes)));
  const keys = [...STATUSES, ...[...seen].filter((k) => !STATUSES.includes(k)).sort()];
  const index = new Map(history.map((s, i) => [s, i]));
  return build(history, keys, (s, key) => rate(history, index.get(s) ?? 0, (t) => t.handshakes[key] ?? 0));
}

/** Messages in and out per second, per subprotocol (over all its endpoints). */
export function messageSeries(history: readonly Snapshot[]): Series {
  const keys = [...new Set(history.flatMap((s) => s.connections.map((c) => c.subprotocol)))].sort();
  const index = new Map(history.map((s, i) => [s, i]));
  const total = (s: Snapshot, key: string): number =>
    s.connections
      .filter((c) => c.subprotocol === key)
      .reduce((sum, c) => sum + c.messagesIn + c.messagesOut, 0);
  return build(history, keys, (s, key) => rate(history, index.get(s) ?? 0, (t) => total(t, key)));
}

/** The last value of each series (what the tiles and the charts' legends show). */
export function latest(series: Series): Map<string, number | null> {
  return new Map(series.labels.map((label, i) => [label, series.ys[i]?.at(-1) ?? null]));
}
