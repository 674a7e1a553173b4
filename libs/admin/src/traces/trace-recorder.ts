import { Inject, Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { GatewayMetrics, type TraceEvent } from '#broker/gateway';
import { TraceBuffer } from './trace-buffer.js';
import { type TraceOnNode, type TraceSummary } from './trace-view.js';

/** Traces running at once (on each node, and so in the cluster): each costs a check per packet. */
export const MAX_RUNNING_TRACES = 8;
/** Ended traces kept for reading on each node; the oldest ended one goes when another ends. */
export const MAX_ENDED_TRACES = 8;
/** Records one trace keeps on one node (the newest). */
export const TRACE_CAPACITY = 10_000;
/** Records one trace takes on one node a second; the excess counts as dropped. */
export const TRACE_RATE_PER_SEC = 200;

/** What a node is asked to run: the same id on every node. */
export interface TraceSpec {
  readonly id: string;
  readonly kind: string;
  readonly key: string;
  readonly durationMs: number;
  readonly startedBy: string;
}

/** One node's account of a trace. */
export type NodeTraceSummary = Omit<TraceSummary, 'state' | 'nodes' | 'missing'> & TraceOnNode;

/** One node's account of a trace with its newest events. */
export interface NodeTrace {
  readonly summary: NodeTraceSummary;
  readonly events: TraceEvent[];
}

/** Why a node does not run a trace: the message is the admin API's problem detail, with its status. */
export class TraceRefusedError extends Error {
  override readonly name = 'TraceRefusedError';

  constructor(
    message: string,
    /** 400: what was asked cannot be traced; 409: not now (too many running). */
    readonly status: 400 | 409,
  ) {
    super(message);
  }
}

interface LocalTrace {
  readonly spec: TraceSpec;
  readonly buffer: TraceBuffer;
  readonly startedAtMs: number;
  readonly endsAtMs: number;
  endedAtMs: number | null;
  unfollow: () => void;
  timer: NodeJS.Timeout | null;
}

/**
 * The traces on this node: each follows what its module's trace kind selects into a bounded buffer
 * until it is stopped or its time is up, and is kept for reading after (the latest MAX_ENDED_TRACES).
 */
@Injectable()
export class TraceRecorder implements OnModuleDestroy {
  private readonly traces = new Map<string, LocalTrace>();

  constructor(
    private readonly metrics: GatewayMetrics,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  get running(): number {
    let count = 0;
    for (const trace of this.traces.values()) if (trace.endedAtMs === null) count++;
    return count;
  }

  /** Starts it here (again: nothing changes); TraceRefusedError when it cannot run. */
  start(spec: TraceSpec): NodeTraceSummary {
    const known = this.traces.get(spec.id);
    if (known !== undefined) return this.summary(known);
    // Checked again here: another node's request is JSON, and a timer of NaN would fire at once.
    if (!Number.isInteger(spec.durationMs) || spec.durationMs <= 0) {
      throw new TraceRefusedError(
        `a trace runs for a positive whole number of ms, not ${spec.durationMs}`,
        400,
      );
    }
    const kind = this.metrics.traces.get(spec.kind);
    if (kind === undefined) throw new TraceRefusedError(`no trace kind ${spec.kind}`, 400);
    const invalid = kind.invalid(spec.key);
    if (invalid !== null) throw new TraceRefusedError(`key: ${invalid}`, 400);
    if (this.running >= MAX_RUNNING_TRACES) {
      throw new TraceRefusedError(
        `${MAX_RUNNING_TRACES} traces are running, the most at once: stop one or wait for one to end`,
        409,
      );
    }
    const now = Date.now();
    const buffer = new TraceBuffer(TRACE_CAPACITY, TRACE_RATE_PER_SEC, now);
    const trace: LocalTrace = {
      spec,
      buffer,
      startedAtMs: now,
      endsAtMs: now + spec.durationMs,
      endedAtMs: null,
      unfollow: () => undefined,
      timer: null,
    };
    trace.unfollow = kind.follow(spec.key, { write: (record) => void buffer.add(record, Date.now()) });
    trace.timer = setTimeout(() => this.end(trace), spec.durationMs);
    trace.timer.unref();
    this.traces.set(spec.id, trace);
    return this.summary(trace);
  }

  /** Stops it here; what it is now, or null when this node does not know it. */
  stop(id: string): NodeTraceSummary | null {
    const trace = this.traces.get(id);
    if (trace === undefined) return null;
    this.end(trace);
    return this.summary(trace);
  }

  /** It with its newest `limit` events, or null when this node does not know it. */
  read(id: string, limit?: number): NodeTrace | null {
    const trace = this.traces.get(id);
    if (trace === undefined) return null;
    const node = this.node;
    const events = trace.buffer.newest(limit).map(({ atMs, record }) => ({
      time: new Date(atMs).toISOString(),
      node,
      ...record,
    }));
    return { summary: this.summary(trace), events };
  }

  list(): NodeTraceSummary[] {
    return [...this.traces.values()].map((trace) => this.summary(trace));
  }

  onModuleDestroy(): void {
    for (const trace of this.traces.values()) this.end(trace);
  }

  private get node(): string | null {
    return this.cluster?.nodeId ?? null;
  }

  private end(trace: LocalTrace): void {
    if (trace.endedAtMs !== null) return;
    trace.endedAtMs = Date.now();
    if (trace.timer !== null) clearTimeout(trace.timer);
    trace.timer = null;
    trace.unfollow();
    const ended = [...this.traces.values()].filter((t) => t.endedAtMs !== null);
    // Map order is start order: the first ended ones started first.
    for (const old of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_TRACES))) {
      this.traces.delete(old.spec.id);
    }
  }

  private summary(trace: LocalTrace): NodeTraceSummary {
    const { id, kind, key, startedBy } = trace.spec;
    return {
      id,
      kind,
      key,
      startedBy,
      startedAt: new Date(trace.startedAtMs).toISOString(),
      endsAt: new Date(trace.endedAtMs ?? trace.endsAtMs).toISOString(),
      node: this.node,
      state: trace.endedAtMs === null ? 'running' : 'ended',
      events: trace.buffer.size,
      dropped: trace.buffer.dropped,
      overwritten: trace.buffer.overwritten,
    };
  }
}
