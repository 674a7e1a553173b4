import { type Kysely, type Selectable } from 'kysely';
import { writeAudit } from './audit.repository.js';
import { isUniqueViolation } from './database.js';
import { ConflictError, NotFoundError } from './errors.js';
import { newId, timestamp } from './ids.js';
import { type Database, type OriginsTable } from './schema.js';
import { type Actor, type OriginEntry } from './store.types.js';

const GLOBAL = '';

function view(row: Selectable<OriginsTable>): OriginEntry {
  return {
    id: row.id,
    endpoint: row.endpoint === GLOBAL ? null : row.endpoint,
    origin: row.origin,
    createdAt: row.created_at,
    createdBy: row.created_by,
  };
}

/** Origin allowlist entries. Entries are validated by the caller (the admin DTO) before they get here. */
export class OriginsRepository {
  private readonly listeners: (() => void)[] = [];

  constructor(private readonly db: Kysely<Database>) {}

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** endpoint undefined: every entry; null: global entries only; a path: that endpoint's entries. */
  async list(endpoint?: string | null): Promise<OriginEntry[]> {
    let query = this.db.selectFrom('origins').selectAll().orderBy('id');
    if (endpoint !== undefined) query = query.where('endpoint', '=', endpoint ?? GLOBAL);
    return (await query.execute()).map(view);
  }

  async add(
    input: { readonly endpoint: string | null; readonly origin: string },
    actor: Actor,
  ): Promise<OriginEntry> {
    const row = {
      id: newId(),
      endpoint: input.endpoint ?? GLOBAL,
      origin: input.origin,
      created_at: timestamp(),
      created_by: actor,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('origins').values(row).execute();
        await writeAudit(trx, {
          actor,
          action: 'origin.add',
          target: row.id,
          before: null,
          after: view(row),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ConflictError(`${input.origin} is already allowed ${scopeText(input.endpoint)}`);
      }
      throw err;
    }
    this.changed();
    return view(row);
  }

  async remove(id: string, actor: Actor): Promise<OriginEntry> {
    const removed = await this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('origins').selectAll().where('id', '=', id).executeTakeFirst();
      if (row === undefined) return null;
      await trx.deleteFrom('origins').where('id', '=', id).execute();
      await writeAudit(trx, { actor, action: 'origin.remove', target: id, before: view(row), after: null });
      return view(row);
    });
    if (removed === null) throw new NotFoundError(`no origin entry ${id}`);
    this.changed();
    return removed;
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

function scopeText(endpoint: string | null): string {
  return endpoint === null ? 'globally' : `on ${endpoint}`;
}
