import { type PanelColumn, type PanelRow } from './dashboard-panels.js';

/** The longest key a lookup is asked for (the admin API refuses longer ones before any module sees it). */
export const LOOKUP_KEY_MAX_LENGTH = 1024;

/** One line of a found thing: a label and its text, or an ISO time the page shows in the viewer's clock. */
export interface LookupField {
  readonly label: string;
  /** Null shows as –. */
  readonly value: string | null;
  readonly kind?: 'text' | 'time';
}

/** A table of a found thing (a session's subscriptions): bounded by the module that answers it. */
export interface LookupTable {
  /** Unique within the view (tests and scripts find it by this). */
  readonly id: string;
  readonly title: string;
  readonly columns: readonly PanelColumn[];
  /** Shown when there are no rows. */
  readonly empty: string;
  readonly rows: readonly PanelRow[];
}

/** Something an operator may do to what was found, offered only where it applies. */
export interface LookupAction {
  /** Unique within the lookup: what `act` is given. */
  readonly id: string;
  /** The button's text. */
  readonly label: string;
  /** The sentence the page asks the operator to confirm before it acts. */
  readonly confirm: string;
}

/** A found thing as the dashboard shows it (GET /admin/v1/lookups/:id/:key answers it as it is). */
export interface LookupView {
  readonly heading: string;
  /** The cluster node holding it; null on a single broker (or where no node does). */
  readonly node: string | null;
  readonly fields: readonly LookupField[];
  readonly tables: readonly LookupTable[];
  /** Live nodes that did not answer in time: what they hold is not in this answer. */
  readonly missing: readonly string[];
  readonly actions: readonly LookupAction[];
}

/** What a lookup answers: the view, or not found (with the nodes that could not be asked). */
export type LookupResult =
  | { readonly found: true; readonly view: LookupView }
  | { readonly found: false; readonly missing: readonly string[] };

/** What a lookup's id may be: it is a path segment of the admin API and an id on the page. */
const LOOKUP_ID = /^[a-z0-9][a-z0-9.-]{0,63}$/;

/**
 * A way to find one thing by its key on the dashboard (a client's session by its id, an application's
 * device by serial number), with what an operator may do to it. It is asked only for a key of 1 to
 * LOOKUP_KEY_MAX_LENGTH characters with no control character (the admin API refuses others with 400).
 */
export interface DashboardLookup {
  /** Unique across modules: the path segment of its admin routes (a-z, 0-9, '.' and '-', up to 64). */
  readonly id: string;
  /** What it finds ('Device'). */
  readonly title: string;
  /** What the key is ('Serial number'). */
  readonly keyLabel: string;
  find(key: string): Promise<LookupResult>;
  /**
   * Does `actionId` to what `key` finds, for `actor` (the admin API audits it): 'not-found' when there
   * is nothing it applies to now, or the action is not one of this lookup's.
   */
  act(key: string, actionId: string, actor: string): Promise<'done' | 'not-found'>;
}

/** A lookup as GET /admin/v1/lookups lists it. */
export interface LookupInfo {
  readonly id: string;
  readonly title: string;
  readonly keyLabel: string;
}

/** Where modules add their lookups; the admin API's /lookups routes ask them. */
export class DashboardLookups {
  private readonly lookups = new Map<string, DashboardLookup>();

  /** Adds `lookup`; one with its id already there is refused (two modules would answer one route). */
  add(lookup: DashboardLookup): void {
    if (!LOOKUP_ID.test(lookup.id)) {
      throw new Error(`a dashboard lookup's id must be a-z, 0-9, '.' and '-' (up to 64): ${lookup.id}`);
    }
    if (this.lookups.has(lookup.id)) throw new Error(`a dashboard lookup ${lookup.id} is already there`);
    this.lookups.set(lookup.id, lookup);
  }

  /** The lookup with that id, or undefined. */
  get(id: string): DashboardLookup | undefined {
    return this.lookups.get(id);
  }

  /** Every lookup, in the order they were added. */
  list(): LookupInfo[] {
    return [...this.lookups.values()].map(({ id, title, keyLabel }) => ({ id, title, keyLabel }));
  }
}
