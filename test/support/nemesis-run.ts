import { setTimeout as sleep } from 'node:timers/promises';
import { type BrokerNode, TEST_NODE_TIMEOUT_MS, type TestCluster, until } from './cluster.js';
import { type CallStats, OcppCalls, WampCalls } from './nemesis-calls.js';
import { type RetainedRead, RetainedWorkload, judgeGroup } from './nemesis-topics.js';
import { Device, judge, Publisher, watchWills } from './nemesis.js';

/**
 * The faults a run injects: a node SIGKILLed (and started again under its id), a node SIGSTOPped past
 * nodeTimeoutMs, a node cut off from NATS past nodeTimeoutMs (its path blackholed: the cluster must be
 * started `proxied`), nats-server restarted cleanly (SIGTERM) or killed (SIGKILL, losing what JetStream
 * had not flushed), and a node paused while nats-server restarts.
 */
export const NEMESES = ['kill', 'pause', 'cut', 'nats-restart', 'nats-kill', 'pause-nats-restart'] as const;
export type Nemesis = (typeof NEMESES)[number];

/** mulberry32: a run's schedule (which fault, which node, how long) repeats with its seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface NemesisRunOptions {
  readonly seed: number;
  /** The faults, in this order (one round each), or drawn from `NEMESES` until `deadline`. */
  readonly schedule: readonly Nemesis[] | { readonly deadline: number; readonly nemeses: readonly Nemesis[] };
  readonly devices: number;
  /** How long after each fault the cluster is left alone before the next. */
  readonly settleMs: number;
  readonly log?: (line: string) => void;
}

/** One fault as it was injected. */
export interface Fault {
  readonly nemesis: Nemesis;
  readonly node: string;
  /** performance.now() when it began. */
  readonly at: number;
}

/** What one run did to the guarantees, per fault as far as it can be told (a message by when it was acknowledged). */
export interface NemesisReport {
  readonly seed: number;
  readonly faults: readonly Fault[];
  readonly acked: number;
  readonly refused: number;
  /** Acknowledged messages a device never got, each with the fault before its acknowledgement. */
  readonly lost: readonly {
    readonly device: string;
    /** The client id it was published for, and when (epoch ms) its publisher had it acknowledged. */
    readonly clientId: string;
    readonly ackedAtMs: number;
    readonly n: number;
    readonly after: Fault | null;
    /** How it travelled to the device (`Device.traceOf`). */
    readonly trace: string;
  }[];
  readonly repeats: number;
  readonly repeatsWithoutDup: number;
  /** QoS 2 messages a QoS 2 device's application got more than once. */
  readonly qos2Repeats: number;
  /** Each of those: the device's client id, the message, and when (epoch ms) its second copy came. */
  readonly qos2Twice: readonly { readonly clientId: string; readonly n: number; readonly atMs: number }[];
  /** Wills that arrived while their device was connected. */
  readonly willsWhileConnected: number;
  /**
   * The takeover race: two devices under one client id, each taking the session from the other on its
   * reconnect. How long both held a connection at once (by their own view: from the newer CONNACK to the
   * older connection's close), in all and at most; and the acknowledged messages neither got.
   */
  readonly twins: {
    readonly takeovers: number;
    readonly overlapMs: number;
    readonly maxOverlapMs: number;
    /**
     * Messages a twin got after the other's newer connection was accepted: served by two nodes. Each
     * with its timing, to tell a message sent before the move and read late from one sent after it.
     */
    readonly superseded: readonly string[];
  };
  readonly wills: number;
  /** New subscribers' reads of the retained topic after each fault (stale: empty, or older than acknowledged before it). */
  readonly retained: {
    readonly reads: number;
    readonly stale: readonly RetainedRead[];
    readonly unreachable: number;
    /** The reads after the end on each node that were not the last acknowledged message (or a later one sent). */
    readonly wrongAtEnd: readonly RetainedRead[];
  };
  /** A shared subscription's two members, as one group: acknowledged messages none got, and repeats. */
  readonly shared: {
    readonly acked: number;
    readonly lost: readonly number[];
    /** The first lost, each with the fault before its acknowledgement. */
    readonly lostAfter: readonly string[];
    readonly repeats: number;
    readonly repeatsWithoutDup: number;
    /** The first repeats without DUP, each copy with its member, packet id and time. */
    readonly withoutDup: readonly string[];
    /** Each member's connections (node, from, to). */
    readonly members: readonly string[];
  };
  readonly wamp: CallStats;
  readonly ocpp: CallStats;
  /** Per device: its connections (node, from, to) and how many messages it got, for a failure to show. */
  readonly devices: readonly string[];
  /** A device's connection lost and the next one accepted, in ms, with the fault before the loss. */
  readonly failovers: readonly { readonly ms: number; readonly after: Fault | null }[];
  /** Each second copy a device got (without DUP, or of a QoS 2 message), with the fault before it. */
  readonly repeated: readonly {
    readonly kind: 'without DUP' | 'QoS 2 twice';
    readonly after: Fault | null;
  }[];
  /**
   * What was not served again after the last fault: each workload (a publisher, a device, the shared
   * group, the calls) that got nothing through from the last fault's settle time until `SERVED_AGAIN_MS`
   * past it.
   */
  readonly stopped: readonly string[];
  /** From the last fault until every workload had been served again (or the wait gave up). */
  readonly servedAgainMs: number;
  /**
   * What the nodes themselves logged of a stream message written to a connection after its session's
   * record had moved to another node (the record's time stored against the write's): the session served
   * by two nodes, each as `node: client id, ms after the move`. The twins' `superseded` is the test
   * process's view of the same, which cannot tell a message read late from one sent late.
   */
  readonly sentAfterMove: readonly string[];
  /** Each node process that ended though no fault ended it (a crash), with the fault before it and its last output. */
  readonly crashed: readonly string[];
}

/**
 * How long a call may take before it counts as unanswered: far past every bound the cluster promises a
 * call in flight to a dead or silent node (`nodeTimeoutMs`, `requestTimeoutMs`, the OCPP call timeout).
 */
const CALL_ANSWER_MS = 60_000;

/**
 * How long after the last fault has settled every workload must have got through again: the slowest
 * recovery a fault may need (a NATS restart: the server's start, the clients' reconnect wait, a stream
 * write that timed out while it was down) with room to spare.
 */
const SERVED_AGAIN_MS = 30_000;
/** What a node logs (`SessionWrites.lost`) when it finds it sent a stream message after the record moved. */
const SENT_AFTER_MOVE = 'mqtt: a stream message went to a connection after its session record moved';

/** The workloads beside the devices, as the checker reads them. */
interface Beside {
  readonly retained: RetainedWorkload;
  readonly wrongAtEnd: readonly RetainedRead[];
  readonly sharedPublisher: Publisher;
  readonly members: readonly Device[];
  readonly wamp: CallStats;
  readonly ocpp: CallStats;
  readonly stopped: readonly string[];
  readonly servedAgainMs: number;
  readonly sentAfterMove: readonly string[];
  readonly crashed: readonly string[];
}

/**
 * Runs a workload under faults on a running test cluster: its first node (the anchor) hosts a QoS 2
 * publisher and a will watcher and is never faulted itself; persistent devices (QoS 1 and QoS 2 in
 * turn) with wills and a 2 s keep-alive read every message, reconnecting on their own to the nodes in turn. After the last
 * fault the publisher stops and the devices get up to 60 s to catch up; then the checker counts.
 */
export async function runNemesis(cluster: TestCluster, options: NemesisRunOptions): Promise<NemesisReport> {
  const random = seeded(options.seed);
  const log = options.log ?? (() => undefined);
  const anchor = cluster.nodes[0] as BrokerNode;
  const current = (): BrokerNode[] => {
    const byId = new Map<string, BrokerNode>();
    for (const node of cluster.nodes) if (node.alive) byId.set(node.id, node);
    return [...byId.values()];
  };
  const run = `r${options.seed}`;
  const wills = await watchWills(anchor, `wills/${run}/#`);
  // The non-anchor nodes, the `start`th first: each client begins on its own node and moves on in turn.
  const rotated = (start: number) => () => {
    const running = current().filter((node) => node.id !== anchor.id);
    // With none running (one killed, the other crashed) a device tries them all the same, as a device would.
    const nodes = running.length > 0 ? running : cluster.nodes.filter((node) => node.id !== anchor.id);
    return [...nodes.slice(start % nodes.length), ...nodes.slice(0, start % nodes.length)];
  };
  const devices: Device[] = [];
  for (let i = 0; i < options.devices; i++) {
    devices.push(
      new Device({
        clientId: `${run}-d${i}`,
        // Never the anchor: a device there would sit out every fault but NATS's.
        nodes: rotated(i + 1),
        filter: `chaos/${run}`,
        // Every other device subscribes at QoS 2: exactly once, across the same faults.
        qos: i % 2 === 0 ? 1 : 2,
        expirySec: 60,
        keepaliveSec: 2,
        willTopic: `wills/${run}/d${i}`,
      }),
    );
  }
  for (const device of devices) await device.subscribed();
  // The takeover race: one session, two devices, on different nodes; each reconnect takes it over.
  const twins = [0, 1].map(
    (start) =>
      new Device({
        clientId: `${run}-twin`,
        nodes: rotated(start),
        filter: `chaos/${run}`,
        qos: 1,
        expirySec: 60,
        keepaliveSec: 2,
        reconnectMs: 1000,
      }),
  );
  // A shared subscription's members, persistent, on different nodes: the group must get every message.
  const members = [0, 1].map(
    (start) =>
      new Device({
        clientId: `${run}-s${start}`,
        nodes: rotated(start),
        filter: `$share/${run}/chaos/${run}/shared`,
        qos: 1,
        expirySec: 60,
        keepaliveSec: 2,
      }),
  );
  for (const member of members) await member.subscribed();
  for (const twin of twins) await twin.subscribed();
  const publisher = await Publisher.on(anchor, `${run}-publisher`);
  // Published at QoS 2, so that QoS 2 subscriptions get QoS 2 (QoS 1 ones get QoS 1).
  publisher.start(`chaos/${run}`, 2, 20);
  const sharedPublisher = await Publisher.on(anchor, `${run}-shared-publisher`);
  sharedPublisher.start(`chaos/${run}/shared`, 1, 50);
  const retained = new RetainedWorkload(await Publisher.on(anchor, `${run}-retainer`), `retained/${run}`);
  retained.publisher.start(retained.topic, 1, 250, true);
  // Calls from the anchor to a callee and a charge point that move between the other nodes.
  const others = rotated(0);
  const wamp = new WampCalls(anchor, others, `chaos.${run}.echo`);
  wamp.start(100);
  const ocpp = new OcppCalls(anchor, others, `CP-${run}`, CALL_ANSWER_MS);
  ocpp.start(200);

  const faults: Fault[] = [];
  const crashed: string[] = [];
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const { schedule } = options;
  for (let round = 0; ; round++) {
    let nemesis: Nemesis;
    if (Array.isArray(schedule)) {
      if (round >= schedule.length) break;
      nemesis = schedule[round] as Nemesis;
    } else {
      const timed = schedule as { deadline: number; nemeses: readonly Nemesis[] };
      if (performance.now() >= timed.deadline) break;
      nemesis = pick(timed.nemeses);
    }
    const victim = pick(current().filter((node) => node.id !== anchor.id));
    const fault: Fault = { nemesis, node: victim.id, at: performance.now() };
    faults.push(fault);
    log(`fault ${round + 1}: ${nemesis} ${nemesis.startsWith('nats') ? '' : victim.id}`);
    await inject(cluster, nemesis, victim, random);
    await restartCrashed(cluster, crashed, fault);
    await sleep(options.settleMs);
    // Whatever was retained before the fault began, every node gives a new subscriber now.
    await retained.probe(current(), retained.ackedBy(fault.at));
  }

  // Served to the end: after the last fault has settled, every workload gets through again.
  const lastFaultAt = faults.at(-1)?.at ?? 0;
  const unserved = (): string[] =>
    notServedSince(lastFaultAt + options.settleMs, {
      publisher,
      sharedPublisher,
      devices,
      members,
      wamp: wamp.stats(),
      ocpp: ocpp.stats(),
    });
  await until(
    'every workload served after the last fault',
    () => unserved().length === 0,
    SERVED_AGAIN_MS,
  ).catch(() => undefined);
  const servedAgainMs = Math.round(performance.now() - lastFaultAt);
  const stopped = unserved();
  await restartCrashed(cluster, crashed, faults.at(-1) ?? null);

  await Promise.all([publisher.stop(), sharedPublisher.stop(), retained.publisher.stop()]);
  // The calls get their time to come back while the devices catch up.
  const callsEnded = Promise.all([wamp.stop(CALL_ANSWER_MS), ocpp.stop(CALL_ANSWER_MS)]);
  const everything = () =>
    devices.every((device) => judge(publisher.acked, device).lost.length === 0) &&
    twinsLost(publisher.acked, twins).length === 0 &&
    judgeGroup(sharedPublisher.acked, members).lost.length === 0;
  await until('every device got every acknowledged message', everything, 60_000).catch(() => undefined);
  const readsBefore = retained.reads.length;
  await retained.probe(current(), retained.publisher.acked.at(-1) ?? 0);
  const atEnd = retained.reads.slice(readsBefore);
  await callsEnded;
  const report = checker(options.seed, faults, publisher, devices, twins, wills.at, {
    retained,
    wrongAtEnd: atEnd.filter(
      (read) => read.value === null || read.value < read.atLeast || read.value > retained.publisher.sent,
    ),
    sharedPublisher,
    members,
    wamp: wamp.stats(),
    ocpp: ocpp.stats(),
    stopped,
    servedAgainMs,
    sentAfterMove: sentAfterMove(cluster),
    crashed,
  });
  for (const device of [...devices, ...twins, ...members]) await device.end();
  await wills.end();
  return report;
}

/** How much of a crashed node's output the report keeps. */
const CRASH_OUTPUT_CHARS = 4000;

/**
 * Records each node whose newest process ended though no fault ended it (a crash, or an exit of the
 * broker's own), with its last output, and starts it again as an orchestrator would, so that the run
 * goes on and the crash is a finding rather than the end of the run.
 */
async function restartCrashed(cluster: TestCluster, crashed: string[], after: Fault | null): Promise<void> {
  const newest = new Map<string, BrokerNode>();
  for (const node of cluster.nodes) newest.set(node.id, node);
  for (const node of newest.values()) {
    const how = node.unexpectedExit;
    if (how === null) continue;
    const fault = after === null ? 'no fault' : `${after.nemesis} ${after.node} at ${Math.round(after.at)}`;
    crashed.push(`${node.id} ${how} after ${fault}:\n${node.log().slice(-CRASH_OUTPUT_CHARS)}`);
    await cluster.startNode({}, node.id);
  }
}

async function inject(
  cluster: TestCluster,
  nemesis: Nemesis,
  victim: BrokerNode,
  random: () => number,
): Promise<void> {
  switch (nemesis) {
    case 'kill':
      await victim.kill();
      await sleep(500 + random() * 1500);
      await cluster.startNode({}, victim.id);
      return;
    case 'pause':
      victim.pause();
      await sleep(TEST_NODE_TIMEOUT_MS * 2 + random() * 1500);
      victim.resume();
      return;
    case 'cut':
      victim.cut();
      await sleep(TEST_NODE_TIMEOUT_MS * 2 + random() * 3000);
      victim.heal();
      return;
    case 'nats-restart':
    case 'nats-kill':
      await cluster.nats.stop(nemesis === 'nats-kill' ? 'SIGKILL' : 'SIGTERM');
      await sleep(random() * 1000);
      await cluster.nats.restart();
      return;
    case 'pause-nats-restart':
      victim.pause();
      await cluster.nats.stop('SIGTERM');
      await cluster.nats.restart();
      await sleep(1000 + random() * 2000);
      victim.resume();
      return;
  }
}

/** Where a message the twins lost fell: each twin's connections around its acknowledgement, and who got its neighbours. */
function twinsTrace(n: number, ackedAt: number, twins: readonly Device[]): string {
  const near = (at: number) => Math.abs(at - ackedAt) <= 5000;
  const sides = twins.map((twin, i) => {
    const connections = twin.connections
      .filter((c) => near(c.from) || (c.to !== null && near(c.to)) || (c.from < ackedAt && c.to === null))
      .map((c) => `${c.node} ${Math.round(c.from)}-${c.to === null ? 'open' : Math.round(c.to)}`);
    const neighbours = twin.seen
      .filter((m) => Math.abs(m.n - n) <= 2)
      .map((m) => `#${m.n} at ${Math.round(m.at)}${m.dup ? ' DUP' : ''}`);
    return `twin ${i}: connected ${connections.join(', ') || 'nowhere'}; got ${neighbours.join(', ') || 'none of #n±2'}`;
  });
  return `acknowledged at ${Math.round(ackedAt)}; ${sides.join(' | ')}`;
}

/** The acknowledged messages that neither twin got: the session, whichever held it, lost them. */
function twinsLost(acked: readonly number[], twins: readonly Device[]): number[] {
  const seen = new Set(twins.flatMap((twin) => twin.seen.map((m) => m.n)));
  return acked.filter((n) => !seen.has(n));
}

/** The nodes' own log of stream messages sent to a connection after its session's record moved on. */
function sentAfterMove(cluster: TestCluster): string[] {
  return cluster.nodes.flatMap((node) =>
    node
      .logLines()
      .filter((line) => line['msg'] === SENT_AFTER_MOVE)
      .map((line) => `${node.id}: ${String(line['clientId'])}, ${String(line['afterMs'])} ms after the move`),
  );
}

/** A log line's fields that every line has. */
const LOG_FRAME = new Set(['msg', 'time', 'level', 'pid', 'hostname', 'module']);

/** What every node logged in the 3 s before each send after a move, and just after: its path, for a reader. */
export function sentAfterMoveContext(cluster: TestCluster): string {
  return nodeLines(cluster)
    .filter(({ line }) => line['msg'] === SENT_AFTER_MOVE)
    .map(({ node, line: hit }) => {
      const around = nodeLogAround(cluster, String(hit['clientId']), Number(hit['time']), 3000, 100);
      return `${node} sent to ${String(hit['clientId'])} ${String(hit['afterMs'])} ms after the move:\n${around}`;
    })
    .join('\n');
}

/** What the nodes logged around the acknowledgement of each lost message (the first 10), for tracing it. */
export function lostContext(cluster: TestCluster, report: NemesisReport): string {
  return report.lost
    .slice(0, 10)
    .map(
      (l) =>
        `#${l.n} for ${l.device}, acknowledged at ${new Date(l.ackedAtMs).toISOString()}:\n` +
        nodeLogAround(cluster, l.clientId, l.ackedAtMs, 3000, 5000),
    )
    .join('\n');
}

/** What the nodes logged before each QoS 2 message a device got twice (the first 10), for tracing it. */
export function qos2TwiceContext(cluster: TestCluster, report: NemesisReport): string {
  return report.qos2Twice
    .slice(0, 10)
    .map(
      (t) =>
        `#${t.n} twice to ${t.clientId}, the second at ${new Date(t.atMs).toISOString()}:\n` +
        nodeLogAround(cluster, t.clientId, t.atMs, 6000, 500),
    )
    .join('\n');
}

function nodeLines(cluster: TestCluster): { node: string; line: Record<string, unknown> }[] {
  return cluster.nodes.flatMap((node) => node.logLines().map((line) => ({ node: node.id, line })));
}

/** The nodes' warnings and lines about `clientId` or the cluster itself from `beforeMs` before `at` (epoch ms) to `afterMs` after. */
function nodeLogAround(
  cluster: TestCluster,
  clientId: string,
  at: number,
  beforeMs: number,
  afterMs: number,
): string {
  const related = (line: Record<string, unknown>): boolean =>
    line['clientId'] === clientId ||
    Number(line['level']) >= 40 ||
    /^(cluster node|NATS connection|cluster heartbeat|mqtt: session leases)/.test(String(line['msg']));
  return nodeLines(cluster)
    .filter(({ line }) => Number(line['time']) >= at - beforeMs && Number(line['time']) <= at + afterMs)
    .filter(({ line }) => related(line))
    .sort((a, b) => Number(a.line['time']) - Number(b.line['time']))
    .map(({ node, line }) => {
      const rest = Object.fromEntries(Object.entries(line).filter(([key]) => !LOG_FRAME.has(key)));
      return `  ${Number(line['time']) - at} ms ${node}: ${String(line['msg'])} ${JSON.stringify(rest)}`;
    })
    .join('\n');
}

/** Messages a device got on a connection after the other device's newer one was accepted. */
function supersededDeliveries(twins: readonly Device[]): string[] {
  const found: string[] = [];
  for (const [mine, other] of [twins, [...twins].reverse()] as Device[][]) {
    if (mine === undefined || other === undefined) continue;
    for (const m of mine.seen) {
      const holding = mine.connections.find((c) => c.from <= m.at && (c.to === null || c.to >= m.at));
      if (holding === undefined) continue;
      const newer = other.connections.find((c) => c.from > holding.from && c.from < m.at);
      if (newer === undefined) continue;
      const at = (ms: number): number => Math.round(ms);
      found.push(
        `${m.n}${m.dup ? ' DUP' : ''} at ${at(m.at)} on ${holding.node} (connected ${at(holding.from)}), ` +
          `${at(m.at - newer.from)} ms after the other's connection on ${newer.node} at ${at(newer.from)}`,
      );
    }
  }
  return found;
}

/** How long two devices under one client id were both connected, by their own views. */
function overlaps(twins: readonly Device[]): number[] {
  const [a, b] = twins;
  if (a === undefined || b === undefined) return [];
  const now = performance.now();
  const found: number[] = [];
  for (const x of a.connections) {
    for (const y of b.connections) {
      const ms = Math.min(x.to ?? now, y.to ?? now) - Math.max(x.from, y.from);
      if (ms > 0) found.push(ms);
    }
  }
  return found;
}

function checker(
  seed: number,
  faults: readonly Fault[],
  publisher: Publisher,
  devices: readonly Device[],
  twins: readonly Device[],
  willsAt: readonly number[],
  beside: Beside,
): NemesisReport {
  const before = (at: number): Fault | null => faults.filter((fault) => fault.at <= at).at(-1) ?? null;
  const ackedAt = new Map(publisher.acked.map((n, i) => [n, publisher.ackedAt[i] as number]));
  const lost: NemesisReport['lost'][number][] = [];
  const epochOf = (n: number): number => Math.round(performance.timeOrigin + (ackedAt.get(n) ?? 0));
  let repeats = 0;
  let qos2Repeats = 0;
  const qos2Twice: { clientId: string; n: number; atMs: number }[] = [];
  let repeatsWithoutDup = 0;
  const failovers: { ms: number; after: Fault | null }[] = [];
  const repeated: { kind: 'without DUP' | 'QoS 2 twice'; after: Fault | null }[] = [];
  for (const device of devices) {
    const verdict = judge(publisher.acked, device);
    const secondCopy = (n: number) => device.seen.filter((m) => m.n === n)[1]?.at ?? 0;
    for (const n of verdict.repeatsWithoutDup)
      repeated.push({ kind: 'without DUP', after: before(secondCopy(n)) });
    for (const n of verdict.qos2Repeats) {
      repeated.push({ kind: 'QoS 2 twice', after: before(secondCopy(n)) });
      const clientId = device.client.options.clientId ?? '';
      qos2Twice.push({ clientId, n, atMs: Math.round(performance.timeOrigin + secondCopy(n)) });
    }
    for (const n of verdict.lost)
      lost.push({
        device: device.client.options.clientId ?? '',
        clientId: device.client.options.clientId ?? '',
        ackedAtMs: epochOf(n),
        n,
        after: before(ackedAt.get(n) ?? 0),
        trace: device.traceOf(n),
      });
    repeatsWithoutDup += verdict.repeatsWithoutDup.length;
    qos2Repeats += verdict.qos2Repeats.length;
    repeats += device.seen.length - new Set(device.seen.map((m) => m.n)).size;
    const connections = device.connections;
    for (let i = 1; i < connections.length; i++) {
      const closed = connections[i - 1]?.to ?? null;
      if (closed !== null)
        failovers.push({ ms: (connections[i]?.from ?? closed) - closed, after: before(closed) });
    }
  }
  for (const n of twinsLost(publisher.acked, twins))
    lost.push({
      device: 'twins',
      clientId: twins[0]?.client.options.clientId ?? '',
      ackedAtMs: epochOf(n),
      n,
      after: before(ackedAt.get(n) ?? 0),
      trace: twinsTrace(n, ackedAt.get(n) ?? 0, twins),
    });
  const overlapped = overlaps(twins);
  const whileConnected = willsAt.filter((at) => devices.some((device) => device.connectedAt(at)));
  const group = judgeGroup(beside.sharedPublisher.acked, beside.members);
  const { sharedPublisher } = beside;
  const sharedAckedAt = new Map(
    sharedPublisher.acked.map((n, i) => [n, sharedPublisher.ackedAt[i] as number]),
  );
  return {
    seed,
    faults,
    acked: publisher.acked.length,
    refused: publisher.refused,
    lost,
    repeats,
    repeatsWithoutDup,
    qos2Repeats,
    qos2Twice,
    willsWhileConnected: whileConnected.length,
    twins: {
      takeovers: twins.reduce((sum, twin) => sum + twin.connections.length, 0),
      overlapMs: Math.round(overlapped.reduce((sum, ms) => sum + ms, 0)),
      maxOverlapMs: Math.round(Math.max(0, ...overlapped)),
      superseded: supersededDeliveries(twins),
    },
    wills: willsAt.length,
    retained: {
      reads: beside.retained.reads.length,
      stale: beside.retained.stale(),
      unreachable: beside.retained.unreachable,
      wrongAtEnd: beside.wrongAtEnd,
    },
    shared: {
      acked: beside.sharedPublisher.acked.length,
      lost: group.lost,
      lostAfter: group.lost.slice(0, 10).map((n) => {
        const fault = before(sharedAckedAt.get(n) ?? 0);
        return `${n} after ${fault === null ? 'no fault' : `${fault.nemesis} ${fault.node} at ${Math.round(fault.at)}`}`;
      }),
      repeats: group.repeats,
      repeatsWithoutDup: group.repeatsWithoutDup.length,
      withoutDup: group.repeatsWithoutDup.slice(0, 5).map((n) => `${n}: ${group.copies(n)}`),
      members: beside.members.map((member) => `${member.client.options.clientId}: ${connectionsOf(member)}`),
    },
    wamp: beside.wamp,
    ocpp: beside.ocpp,
    failovers,
    repeated,
    stopped: beside.stopped,
    servedAgainMs: beside.servedAgainMs,
    sentAfterMove: beside.sentAfterMove,
    crashed: beside.crashed,
    devices: devices.map((device) => {
      const verdict = judge(publisher.acked, device);
      const copies = (n: number) =>
        `${n} (${device.seen
          .filter((m) => m.n === n)
          .map((m) => `#${m.packetId}${m.dup ? ' DUP' : ''} at ${Math.round(m.at)}`)
          .join(', ')})`;
      // How each travelled too: which PUBREL released each copy.
      const twice = verdict.qos2Repeats.slice(0, 5).map((n) => `${copies(n)} [${device.traceOf(n)}]`);
      const withoutDup = verdict.repeatsWithoutDup.slice(0, 5).map(copies);
      return (
        `${device.client.options.clientId}: ${device.seen.length} messages, connections ${connectionsOf(device)}` +
        (twice.length === 0 ? '' : `; QoS 2 twice: ${twice.join(', ')}`) +
        (withoutDup.length === 0 ? '' : `; without DUP: ${withoutDup.join(', ')}`)
      );
    }),
  };
}

function connectionsOf(device: Device): string {
  return device.connections
    .map((c) => `${c.node} ${Math.round(c.from)}-${c.to === null ? '' : Math.round(c.to)}`)
    .join(', ');
}

function callLine(name: string, stats: CallStats): string {
  const errors = Object.entries(stats.errors)
    .map(([what, n]) => `${n} × ${what}`)
    .join(', ');
  return (
    `${name}: ${stats.calls} calls, ${stats.ok} answered, errors: ${errors === '' ? 'none' : errors} (slowest ${stats.slowestErrorMs} ms), ` +
    `${stats.unanswered} unanswered, ${stats.wrong} wrong answers, ${stats.invokedTwice} run twice` +
    (stats.longestOutage === null
      ? ''
      : `; the longest stretch without an answer: ${Math.round(stats.longestOutage.from)} to ${Math.round(stats.longestOutage.to)} (${Object.entries(
          stats.longestOutage.outcomes,
        )
          .map(([what, n]) => `${n} × ${what}`)
          .join(', ')}; the callee meanwhile: ${
          stats.longestOutage.callees
            .map((c) => `${c.node} ${Math.round(c.from)}-${c.to === null ? 'open' : Math.round(c.to)}`)
            .join(', ') || 'not connected'
        })`)
  );
}

/** The run as a Markdown table, one row per nemesis and one for every fault. */
export function reportTable(report: NemesisReport): string {
  const rows = [
    '| nemesis | faults | acked msgs lost | repeats without DUP | QoS 2 twice | failovers | failover median | failover max |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted.length === 0 ? '-' : `${Math.round(sorted[Math.floor(sorted.length / 2)] as number)} ms`;
  };
  const row = (name: string, after: (fault: Fault | null) => boolean) => {
    const faults = report.faults.filter(after).length;
    const lost = report.lost.filter((l) => after(l.after)).length;
    const failovers = report.failovers.filter((f) => after(f.after)).map((f) => f.ms);
    const max = failovers.length === 0 ? '-' : `${Math.round(Math.max(...failovers))} ms`;
    const repeats = (kind: string) => report.repeated.filter((r) => r.kind === kind && after(r.after)).length;
    return `| ${name} | ${faults} | ${lost} | ${repeats('without DUP')} | ${repeats('QoS 2 twice')} | ${failovers.length} | ${median(failovers)} | ${max} |`;
  };
  for (const nemesis of NEMESES) {
    if (report.faults.some((fault) => fault.nemesis === nemesis))
      rows.push(row(nemesis, (fault) => fault?.nemesis === nemesis));
  }
  // Everything, including what came before the first fault.
  rows.push(row('every fault', () => true));
  rows.push(
    '',
    ...report.faults.map((f) => `${Math.round(f.at)}: ${f.nemesis} ${f.node}`),
    ...report.devices,
    ...lostByFault(report.lost),
    `seed ${report.seed}: ${report.acked} messages acknowledged (${report.refused} refused), ${report.lost.length} deliveries lost, ` +
      `${report.repeats} repeats (${report.repeatsWithoutDup} without DUP, ${report.qos2Repeats} QoS 2 twice), ${report.wills} wills (${report.willsWhileConnected} while connected)`,
    `retained: ${report.retained.reads} reads by new subscribers after the faults, ${report.retained.stale.length} empty or older than acknowledged before the fault${report.retained.stale
      .slice(0, 5)
      .map((r) => ` (${r.node} at ${Math.round(r.at)}: ${r.value ?? 'none'} < ${r.atLeast})`)
      .join(
        '',
      )}, ${report.retained.unreachable} probes not connected; at the end ${report.retained.wrongAtEnd.length} nodes not at the last acknowledged`,
    `shared subscription: ${report.shared.acked} acknowledged, ${report.shared.lost.length} lost by the group${report.shared.lost.length === 0 ? '' : ` (${report.shared.lostAfter.join('; ')})`}, ${report.shared.repeats} repeats (${report.shared.repeatsWithoutDup} without DUP${report.shared.withoutDup.map((copies) => `; ${copies}`).join('')})`,
    ...report.shared.members,
    callLine('WAMP calls', report.wamp),
    callLine('OCPP calls (admin API)', report.ocpp),
    `takeover race: ${report.twins.takeovers} connections of one client id from two devices; both connected at once ${report.twins.overlapMs} ms in all, ${report.twins.maxOverlapMs} ms at most; ${report.twins.superseded.length} messages to a connection already taken over${report.twins.superseded
      .slice(0, 5)
      .map((s) => ` (${s})`)
      .join(
        '',
      )} as the test process read them; by the nodes' own clocks ${report.sentAfterMove.length} sent after the record moved${report.sentAfterMove
      .slice(0, 5)
      .map((s) => ` (${s})`)
      .join('')}`,
    report.crashed.length === 0
      ? 'no node ended on its own'
      : `NODES ENDED ON THEIR OWN (started again): ${report.crashed.join('\n')}`,
    report.stopped.length === 0
      ? `served to the end: every workload again within ${report.servedAgainMs} ms of the last fault`
      : `STOPPED SERVING: ${report.stopped.join(', ')} (nothing through in the ${report.servedAgainMs} ms after the last fault)`,
  );
  return rows.join('\n');
}

/**
 * The losses, one line per device and fault: how many, which numbers (the first 12), and the trace of
 * the first. Every loss is counted in a line, however many there are.
 */
function lostByFault(lost: NemesisReport['lost']): string[] {
  const groups = new Map<string, (typeof lost)[number][]>();
  for (const l of lost) {
    const key = `${l.device} after ${l.after === null ? 'no fault' : `${l.after.nemesis} at ${Math.round(l.after.at)}`}`;
    groups.set(key, [...(groups.get(key) ?? []), l]);
  }
  return [...groups].map(([key, all]) => {
    const numbers = all.map((l) => `#${l.n}`);
    const shown = numbers.length > 12 ? `${numbers.slice(0, 12).join(' ')} ...` : numbers.join(' ');
    return `lost: ${all.length} to ${key} (${shown}); the first: ${all[0]?.trace ?? ''}`;
  });
}

/** The workloads that got nothing through since `since`: nothing acknowledged, received or answered. */
function notServedSince(
  since: number,
  workloads: {
    readonly publisher: Publisher;
    readonly sharedPublisher: Publisher;
    readonly devices: readonly Device[];
    readonly members: readonly Device[];
    readonly wamp: CallStats;
    readonly ocpp: CallStats;
  },
): string[] {
  const { publisher, sharedPublisher, devices, members, wamp, ocpp } = workloads;
  const lastSeen = (device: Device): number => device.seen.at(-1)?.at ?? 0;
  return [
    ...((publisher.ackedAt.at(-1) ?? 0) < since ? ['the publisher'] : []),
    ...((sharedPublisher.ackedAt.at(-1) ?? 0) < since ? ["the shared subscription's publisher"] : []),
    ...devices
      .filter((device) => lastSeen(device) < since)
      .map((device) => device.client.options.clientId ?? ''),
    ...(Math.max(0, ...members.map(lastSeen)) < since ? ['the shared subscription'] : []),
    ...(wamp.lastOkAt < since ? ['the WAMP calls'] : []),
    ...(ocpp.lastOkAt < since ? ['the OCPP calls'] : []),
  ];
}
