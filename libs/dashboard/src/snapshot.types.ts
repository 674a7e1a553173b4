import type { ModuleCard, PanelSnapshot } from '#broker/gateway';

export type { PanelCell, PanelColumn, PanelRow, PanelSnapshot } from '#broker/gateway';

/**
 * What the dashboard's feed sends once a second, as JSON: the page imports these types (and only
 * types) from here, so the two sides cannot drift apart.
 */
export interface Snapshot {
  /** Epoch milliseconds, from the broker's clock. */
  readonly at: number;
  /** This node's id in cluster mode; null on a single node. */
  readonly node: string | null;
  /** The configured endpoint paths (what the page's forms offer). */
  readonly endpoints: readonly string[];
  /** Per endpoint x subprotocol seen since start; counts since start, so the page makes rates. */
  readonly connections: readonly EndpointFigures[];
  /** Handshake answers since start by status ('101', '400', ...); `plain` counts GETs that lost their upgrade headers. */
  readonly handshakes: Readonly<Record<string, number>>;
  /** Refusals since start, and the latest ones, newest first. */
  readonly refusals: { readonly total: number; readonly latest: readonly RefusalRow[] };
  /** Each module's card (its title and labelled live counts), by module name (mqtt, wamp.2.json, ocpp1.6). */
  readonly modules: Readonly<Record<string, ModuleCard>>;
  /** The modules' own tables (the OCPP module's charge points, say), in the order they were added. */
  readonly panels: readonly PanelSnapshot[];
  /** Every live node in cluster mode (this one alone on a single node), and those that did not answer in time. */
  readonly nodes: NodesView;
  /** The alarms holding now, and the last ones cleared (newest first). */
  readonly alarms: { readonly active: readonly AlarmView[]; readonly cleared: readonly AlarmView[] };
}

export interface EndpointFigures {
  readonly endpoint: string;
  readonly subprotocol: string;
  readonly open: number;
  readonly messagesIn: number;
  readonly messagesOut: number;
}

export interface RefusalRow {
  readonly at: number;
  readonly status: number;
  readonly endpoint: string | null;
  readonly title: string;
  readonly detail: string;
}

/** The nodes table, as the feed and GET /admin/v1/nodes give it. */
export interface NodesView {
  readonly answered: readonly NodeRow[];
  /** Live nodes that did not answer in time. */
  readonly missing: readonly string[];
}

export interface NodeRow {
  /** Its node id; null on a single node. */
  readonly node: string | null;
  readonly connections: number;
  /** Its process's CPU (a share of one core), resident memory and event-loop delay p99. */
  readonly load: NodeLoadFigures;
  readonly nats: NodeNats;
  /** Its store, as its last check found it; null when it has none. */
  readonly store: NodeStore | null;
  /** Each module's live counts, by module name. */
  readonly modules: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

/** A node's own load, as the dashboard's nodes table shows it. */
export interface NodeLoadFigures {
  /** CPU since the node's last reading, as a share of one core (null at its first). */
  readonly cpu: number | null;
  readonly rssBytes: number;
  /** The event loop's delay beyond its sampling period, p99 since the node's last reading, in ms. */
  readonly loopDelayP99Ms: number | null;
}

/** A node's NATS connection as its client knows it (never a credential); `not clustered` on a single node. */
export type NodeNats =
  | { readonly state: 'not clustered' }
  | {
      readonly state: 'connected' | 'reconnecting' | 'disconnected';
      /** The server it is (or was last) connected to: its version and host:port. */
      readonly server: { readonly version: string | null; readonly address: string | null };
      /** Milliseconds since it last connected or reconnected. */
      readonly connectedAgoMs: number;
      /** Whether its own heartbeat was written lately (while not, it acts under no lease). */
      readonly heartbeatConfirmed: boolean;
    };

/** A node's store, as its last check (a `select 1`) found it. */
export interface NodeStore {
  /** Its backend: sqlite or postgres. */
  readonly kind: string | null;
  /** Whether the last check answered; null before the first ended. */
  readonly working: boolean | null;
  /** Milliseconds since the last check ended; null before the first. */
  readonly checkedAgoMs: number | null;
  /** The last failure: its first line, shortened, and how many milliseconds ago; null if none yet. */
  readonly lastError: { readonly message: string; readonly agoMs: number } | null;
}

/** An alarm as the dashboard shows it: `until` null while it holds. */
export interface AlarmView {
  readonly name: string;
  readonly title: string;
  /** What it concerns, when that is not in the title (the nodes gone); null otherwise. */
  readonly detail: string | null;
  /** Epoch milliseconds it was raised, and cleared. */
  readonly since: number;
  readonly until: number | null;
}
