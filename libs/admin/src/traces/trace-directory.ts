import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { type TraceEvent } from '#broker/gateway';
import { type NodeTrace, type NodeTraceSummary, TraceRecorder, type TraceSpec } from './trace-recorder.js';
import { type TraceList, type TraceSummary, type TraceView } from './trace-view.js';

const START = 'admin.traces.start';
const STOP = 'admin.traces.stop';
const READ = 'admin.traces.read';
const LIST = 'admin.traces.list';

interface ReadRequest {
  readonly id: string;
  readonly limit?: number | undefined;
}

/**
 * The traces the admin API sees: on a single broker this node's; in cluster mode one trace runs on
 * every node that was live when it started (a node that joins later does not run it), each keeping its
 * own records, and a read gathers every live node's with the nodes that did not answer in time.
 */
@Injectable()
export class TraceDirectory implements OnModuleInit {
  constructor(
    private readonly recorder: TraceRecorder,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    if (this.cluster === null) return;
    this.cluster.serve(START, (spec) => this.recorder.start(spec as TraceSpec));
    this.cluster.serve(STOP, (id) => this.recorder.stop(String(id)));
    this.cluster.serve(READ, (body) => this.recorder.read(String((body as ReadRequest).id), limitOf(body)));
    this.cluster.serve(LIST, () => this.recorder.list());
  }

  /**
   * Starts a trace: on this node first, whose refusal (TraceRefusedError: an unknown kind, a key it
   * cannot follow, too many running) is the answer and starts it nowhere; then on every live node.
   */
  async start(kind: string, key: string, durationSec: number, startedBy: string): Promise<TraceSummary> {
    const spec: TraceSpec = { id: randomUUID(), kind, key, durationMs: durationSec * 1000, startedBy };
    const here = this.recorder.start(spec);
    if (this.cluster === null) return merged([here], []);
    const { answers, missing } = await this.cluster.scatter<NodeTraceSummary>(START, spec);
    return merged([...answers.values()], missing);
  }

  /** Stops it on every node that runs it: what it is now, or null when no answering node knows it. */
  async stop(id: string): Promise<TraceSummary | null> {
    const { answers, missing } = await this.everywhere<NodeTraceSummary | null>(STOP, id, () =>
      this.recorder.stop(id),
    );
    const found = answers.filter((a): a is NodeTraceSummary => a !== null);
    return found.length === 0 ? null : merged(found, missing);
  }

  /**
   * It with the newest `limit` events of every node that answered (all they keep by default), oldest
   * first; null when no answering node knows it.
   */
  async read(id: string, limit?: number): Promise<TraceView | null> {
    const request: ReadRequest = { id, limit };
    const { answers, missing } = await this.everywhere<NodeTrace | null>(READ, request, () =>
      this.recorder.read(id, limit),
    );
    const found = answers.filter((a): a is NodeTrace => a !== null);
    if (found.length === 0) return null;
    const events = byTime(found.flatMap((a) => a.events));
    return {
      ...merged(
        found.map((a) => a.summary),
        missing,
      ),
      events: limit === undefined ? events : events.slice(-limit),
    };
  }

  /** Every trace an answering node knows, the newest first. */
  async list(): Promise<Omit<TraceList, 'kinds'>> {
    const { answers, missing } = await this.everywhere<NodeTraceSummary[]>(LIST, null, () =>
      this.recorder.list(),
    );
    const byId = new Map<string, NodeTraceSummary[]>();
    for (const summary of answers.flat()) {
      const same = byId.get(summary.id);
      if (same === undefined) byId.set(summary.id, [summary]);
      else same.push(summary);
    }
    const traces = [...byId.values()]
      .map((summaries) => merged(summaries, missing))
      .sort((a, b) => compare(b.startedAt, a.startedAt));
    return { traces, missing };
  }

  /** This node's answer alone on a single broker; every live node's in a cluster. */
  private async everywhere<T>(
    service: string,
    body: unknown,
    here: () => T,
  ): Promise<{ answers: T[]; missing: string[] }> {
    if (this.cluster === null) return { answers: [here()], missing: [] };
    const { answers, missing } = await this.cluster.scatter<T>(service, body);
    return { answers: [...answers.values()], missing };
  }
}

function limitOf(body: unknown): number | undefined {
  const limit = (body as ReadRequest).limit;
  return typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? limit : undefined;
}

/** The nodes' accounts of one trace as one: running while it runs on any of them. */
function merged(summaries: readonly NodeTraceSummary[], missing: readonly string[]): TraceSummary {
  const [first] = summaries as [NodeTraceSummary, ...NodeTraceSummary[]];
  const nodes = [...summaries].sort((a, b) => compare(a.node ?? '', b.node ?? ''));
  return {
    id: first.id,
    kind: first.kind,
    key: first.key,
    startedBy: first.startedBy,
    startedAt: summaries.map((s) => s.startedAt).reduce((a, b) => (b < a ? b : a)),
    endsAt: summaries.map((s) => s.endsAt).reduce((a, b) => (b > a ? b : a)),
    state: summaries.some((s) => s.state === 'running') ? 'running' : 'ended',
    nodes: nodes.map(({ node, state, events, dropped, overwritten }) => ({
      node,
      state,
      events,
      dropped,
      overwritten,
    })),
    missing,
  };
}

/** Oldest first; one node's events of one millisecond stay in the order it wrote them (a stable sort). */
function byTime(events: TraceEvent[]): TraceEvent[] {
  return events.sort((a, b) => compare(a.time, b.time));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
