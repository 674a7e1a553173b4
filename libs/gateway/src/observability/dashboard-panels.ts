import { checkPanelCalls, type PanelCalls, type PanelCallsInfo } from './panel-calls.js';

/** One column of a panel's table. */
export interface PanelColumn {
  readonly key: string;
  readonly label: string;
  /** How the page shows the cells: as they are, right-aligned counts, or ISO times in the viewer's clock. */
  readonly kind?: 'text' | 'count' | 'time';
}

/** A status mark in a cell (a connector's state, say): its status picks the colour. */
export interface PanelChip {
  /** Unique within its cell (tests and scripts find it by this). */
  readonly key: string;
  readonly text: string;
  /** A word the page maps to a colour: available, charging, faulted, unavailable... (others are neutral). */
  readonly status: string;
}

/** A cell: text, a number, an ISO time (by its column's kind), chips, or nothing (null, shown as –). */
export type PanelCell = string | number | null | readonly PanelChip[];

export interface PanelRow {
  /** Unique within the panel; the first column's cell heads the row. */
  readonly key: string;
  readonly cells: Readonly<Record<string, PanelCell>>;
}

/**
 * Rows gathered from the cluster's live nodes, with the nodes that did not answer in time (what they
 * hold is not in the rows).
 */
export interface PanelRows {
  readonly rows: readonly PanelRow[];
  readonly missing: readonly string[];
}

/**
 * How long the feed's picture waits for the other nodes, for their figures and for a panel's rows
 * gathered across the cluster (asked at the same time): a node slower than that is named missing, and
 * the feed's second goes on.
 */
export const FEED_NODE_WAIT_MS = 500;

/**
 * A table a module adds to the dashboard (the OCPP module's charge points, an application's devices):
 * read on the feed's tick while someone watches, so it must be bounded (a few hundred rows at most)
 * and cheap when nothing changed.
 */
export interface DashboardPanel {
  /** Unique across modules: the section's id on the page. */
  readonly id: string;
  readonly title: string;
  readonly columns: readonly PanelColumn[];
  /** Shown when there are no rows. */
  readonly empty: string;
  /** Calls an operator may send a row from the page (listed once, never in the feed). */
  readonly calls?: PanelCalls;
  /** Someone opened the feed: start noticing changes. */
  watch?(): void;
  /** Nobody watches any longer. */
  unwatch?(): void;
  /** Its rows now: this node's, or gathered from the cluster's nodes with those that did not answer. */
  rows(): Promise<readonly PanelRow[] | PanelRows> | readonly PanelRow[] | PanelRows;
}

/** A panel as the dashboard's feed sends it. */
export interface PanelSnapshot {
  readonly id: string;
  readonly title: string;
  readonly columns: readonly PanelColumn[];
  readonly empty: string;
  readonly rows: readonly PanelRow[];
  /** Live nodes that did not answer in time (a panel gathered across the cluster); empty otherwise. */
  readonly missing: readonly string[];
}

/** Where modules add their dashboard panels; the dashboard reads them only while someone watches. */
export class DashboardPanels {
  private readonly panels = new Map<string, DashboardPanel>();

  /**
   * Adds `panel`; a panel with its id already there is refused (two modules would show as one), and so
   * are calls that could not make a form (see checkPanelCalls).
   */
  add(panel: DashboardPanel): void {
    if (this.panels.has(panel.id)) throw new Error(`a dashboard panel ${panel.id} is already there`);
    if (panel.calls !== undefined) checkPanelCalls(panel.id, panel.calls);
    this.panels.set(panel.id, panel);
  }

  /** The calls of the panels that offer some, in the order the panels were added. */
  calls(): PanelCallsInfo[] {
    return [...this.panels.values()].flatMap((panel) =>
      panel.calls === undefined ? [] : [{ panel: panel.id, ...panel.calls }],
    );
  }

  watch(): void {
    for (const panel of this.panels.values()) panel.watch?.();
  }

  unwatch(): void {
    for (const panel of this.panels.values()) panel.unwatch?.();
  }

  /** Every panel with its rows now, in the order they were added. */
  async read(): Promise<PanelSnapshot[]> {
    return Promise.all(
      [...this.panels.values()].map(async (panel) => {
        const read = await panel.rows();
        const { rows, missing } = 'rows' in read ? read : { rows: read, missing: [] };
        return {
          id: panel.id,
          title: panel.title,
          columns: panel.columns,
          empty: panel.empty,
          rows,
          missing,
        };
      }),
    );
  }
}
