/** What the alarms are judged on, read every check. */
export interface AlarmReading {
  /** Cluster mode: whether this node reaches NATS; null on a single broker. */
  readonly natsConnected: boolean | null;
  /** Handshakes refused since start, those closed as they arrived included. */
  readonly refusals: number;
  /** Messages shed for slow consumers since start (every protocol's drop counters). */
  readonly dropped: number;
  /** Cluster mode: the nodes whose heartbeats timed out and that have not come back, sorted. */
  readonly nodesGone: readonly string[];
  /** performance.now() of the reading. */
  readonly at: number;
}

/** The alarms there are, each with what an operator reads. */
export const ALARMS = {
  'nats-unreachable': 'NATS unreachable: this node takes no new connections and shares nothing',
  'refusal-surge': 'Refused handshakes surging',
  shedding: 'Messages shed for slow consumers',
  'node-gone': 'A node stopped beating without leaving: its clients reconnect elsewhere',
} as const;
export type AlarmName = keyof typeof ALARMS;

/** Refusals per second, over one check, that count as a surge. */
export const REFUSAL_SURGE_PER_SEC = 20;

/** Which alarms hold at `now`, given the reading before it (null at the first check). */
export function activeAlarms(before: AlarmReading | null, now: AlarmReading): Set<AlarmName> {
  const active = new Set<AlarmName>();
  if (now.natsConnected === false) active.add('nats-unreachable');
  if (now.nodesGone.length > 0) active.add('node-gone');
  if (before !== null && now.at > before.at) {
    const seconds = (now.at - before.at) / 1000;
    if ((now.refusals - before.refusals) / seconds >= REFUSAL_SURGE_PER_SEC) active.add('refusal-surge');
    if (now.dropped > before.dropped) active.add('shedding');
  }
  return active;
}
