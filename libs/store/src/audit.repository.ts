import { type Kysely, type Transaction } from 'kysely';
import { newId, timestamp } from './ids.js';
import { type Database } from './schema.js';
import { type Actor, type AuditRecord } from './store.types.js';

export interface AuditEntry {
  readonly actor: Actor;
  readonly action: string;
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
}

/**
 * Called inside the transaction of the change it records, so a change never lands unaudited. `db` may
 * know more tables than the store's own: a protocol adds its tables with withTables().
 */
export async function writeAudit<DB extends Database>(
  db: Transaction<DB> | Kysely<DB>,
  entry: AuditEntry,
): Promise<void> {
  // Kysely's DB parameter is invariant, yet a handle over more tables serves the store's as well
  // (Transaction<DB> in the signature is what lets the compiler infer DB from a protocol's transaction).
  await (db as unknown as Kysely<Database>)
    .insertInto('audit')
    .values({
      id: newId(),
      at: timestamp(),
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      before: entry.before === null ? null : JSON.stringify(entry.before),
      after: entry.after === null ? null : JSON.stringify(entry.after),
    })
    .execute();
}

export class AuditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** For changes that are not store writes (closing a live connection). */
  record(entry: AuditEntry): Promise<void> {
    return writeAudit(this.db, entry);
  }

  /** Newest first; `before` is the id of the last record of the previous page. */
  async list(options: {
    readonly limit: number;
    readonly before?: string | undefined;
  }): Promise<AuditRecord[]> {
    let query = this.db.selectFrom('audit').selectAll().orderBy('id', 'desc').limit(options.limit);
    if (options.before !== undefined) query = query.where('id', '<', options.before);
    const rows = await query.execute();
    return rows.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor,
      action: row.action,
      target: row.target,
      before: row.before === null ? null : (JSON.parse(row.before) as unknown),
      after: row.after === null ? null : (JSON.parse(row.after) as unknown),
    }));
  }
}
