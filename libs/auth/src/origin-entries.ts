/**
 * Origin allowlist entries managed at run time (the store, through the admin API). The gateway adds
 * them to each endpoint's configured allowlist; an endpoint with neither keeps the same-origin rule.
 */
export interface OriginEntries {
  /** The run-time entries that apply to an endpoint (its own and the global ones), already validated. */
  forEndpoint(path: string): readonly string[];
  /** Called after the entries changed, whether written here or, with a shared database, by another node. */
  onChange(listener: () => void): void;
}

export const ORIGIN_ENTRIES = Symbol('ORIGIN_ENTRIES');
