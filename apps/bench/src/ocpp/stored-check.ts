import Database from 'better-sqlite3';
import { addError } from '../protocol-bench/markdown.js';

/** Where a server of the benchmark keeps the sampled values it stores. */
export interface MeterValueTable {
  /** The SQLite file. */
  readonly path: string;
  /** Its table of sampled values, one row each, with `identity` and `value` columns. */
  readonly table: 'ocpp_meter_values' | 'meter_values';
}

/**
 * Reads the stored sampled values back after the run and checks them against the MeterValues the
 * charge points got answers to: each answered reading stored once. An answer given for a value that
 * is not there, or a value stored twice, is an error: a store that loses or repeats must not read as
 * fast. Values of calls not answered (the run's end) may be there or not.
 */
export function checkStored(
  store: MeterValueTable,
  answered: ReadonlyMap<string, readonly number[]>,
): Map<string, number> {
  const errors = new Map<string, number>();
  const db = new Database(store.path, { readonly: true });
  try {
    const select = db.prepare(`SELECT value FROM ${store.table} WHERE identity = ?`).pluck();
    for (const [identity, readings] of answered) {
      const stored = new Map<string, number>();
      for (const value of select.all(identity) as string[]) stored.set(value, (stored.get(value) ?? 0) + 1);
      for (const reading of readings) {
        const copies = stored.get(String(reading)) ?? 0;
        if (copies === 0) addError(errors, 'answered MeterValues not stored');
        else if (copies > 1) addError(errors, 'MeterValues stored more than once');
      }
    }
  } finally {
    db.close();
  }
  return errors;
}
