import type { TraceEvent, TraceKindInfo } from '#broker/gateway';

export type { TraceEvent, TraceKindInfo } from '#broker/gateway';

/**
 * What the admin API's /traces routes answer, as JSON: the dashboard's page imports these types (and
 * only types) from here.
 */

/** One node's part of a trace: whether it still runs there, and what it kept, dropped and overwrote. */
export interface TraceOnNode {
  /** The cluster node; null on a single broker. */
  readonly node: string | null;
  readonly state: 'running' | 'ended';
  /** Records kept now (at most the trace's capacity). */
  readonly events: number;
  /** Records refused by the node's rate limit. */
  readonly dropped: number;
  /** Records kept and then overwritten by newer ones (the node keeps the newest). */
  readonly overwritten: number;
}

/** A trace as GET /admin/v1/traces lists it. */
export interface TraceSummary {
  readonly id: string;
  /** One of the kinds GET /admin/v1/traces lists. */
  readonly kind: string;
  readonly key: string;
  readonly startedBy: string;
  readonly startedAt: string;
  /** When it stops itself. */
  readonly endsAt: string;
  /** Running while it runs on any node that answered. */
  readonly state: 'running' | 'ended';
  readonly nodes: readonly TraceOnNode[];
  /** Live nodes that did not answer in time: what they hold is not in this answer. */
  readonly missing: readonly string[];
}

/** A trace with its events from every node that answered, oldest first. */
export interface TraceView extends TraceSummary {
  readonly events: readonly TraceEvent[];
}

/** What GET /admin/v1/traces answers. */
export interface TraceList {
  readonly kinds: readonly TraceKindInfo[];
  readonly traces: readonly TraceSummary[];
  readonly missing: readonly string[];
}
