import { sql, type Kysely, type Selectable } from 'kysely';
import {
  ConflictError,
  isUniqueViolation,
  NotFoundError,
  timestamp,
  writeAudit,
  type Actor,
} from '#broker/store';
import { type OcppDatabase, type OcppIdTagsTable } from './ocpp.schema.js';
import { type IdTagInfo, type IdTagStatus, type IdTagView } from './ocpp.types.js';

type Row = Selectable<OcppIdTagsTable>;

function view(row: Row): IdTagView {
  return {
    idTag: row.id_tag,
    status: row.status as IdTagStatus,
    parentIdTag: row.parent_id_tag,
    expiryDate: row.expiry_date,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface IdTagInput {
  readonly idTag: string;
  readonly status: IdTagStatus;
  readonly parentIdTag: string | null;
  readonly expiryDate: string | null;
}

export interface IdTagChange {
  readonly status?: IdTagStatus | undefined;
  readonly parentIdTag?: string | null | undefined;
  readonly expiryDate?: string | null | undefined;
}

/** The id tags the central system authorizes; every change is audited in its own transaction. */
export class OcppIdTagsRepository {
  constructor(private readonly db: Kysely<OcppDatabase>) {}

  async list(options: { readonly limit: number; readonly after?: string | undefined }): Promise<IdTagView[]> {
    let query = this.db.selectFrom('ocpp_id_tags').selectAll().orderBy('id_tag').limit(options.limit);
    if (options.after !== undefined) query = query.where('id_tag', '>', options.after);
    return (await query.execute()).map(view);
  }

  async get(idTag: string): Promise<IdTagView> {
    const row = await this.find(this.db, idTag);
    if (row === undefined) throw new NotFoundError(`no id tag ${idTag}`);
    return view(row);
  }

  async create(input: IdTagInput, actor: Actor): Promise<IdTagView> {
    const now = timestamp();
    const row: Row = {
      id_tag: input.idTag,
      status: input.status,
      parent_id_tag: input.parentIdTag,
      expiry_date: input.expiryDate,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        const same = await this.find(trx, input.idTag);
        if (same !== undefined) throw new ConflictError(`id tag ${same.id_tag} exists`);
        await trx.insertInto('ocpp_id_tags').values(row).execute();
        await writeAudit(trx, {
          actor,
          action: 'id-tag.create',
          target: row.id_tag,
          before: null,
          after: view(row),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`id tag ${input.idTag} exists`);
      throw err;
    }
    return view(row);
  }

  async update(idTag: string, change: IdTagChange, actor: Actor): Promise<IdTagView> {
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await this.find(trx, idTag);
      if (row === undefined) return null;
      const next: Row = {
        ...row,
        status: change.status ?? row.status,
        parent_id_tag: change.parentIdTag === undefined ? row.parent_id_tag : change.parentIdTag,
        expiry_date: change.expiryDate === undefined ? row.expiry_date : change.expiryDate,
        updated_at: timestamp(),
      };
      await trx.updateTable('ocpp_id_tags').set(next).where('id_tag', '=', row.id_tag).execute();
      await writeAudit(trx, {
        actor,
        action: 'id-tag.update',
        target: row.id_tag,
        before: view(row),
        after: view(next),
      });
      return view(next);
    });
    if (result === null) throw new NotFoundError(`no id tag ${idTag}`);
    return result;
  }

  async remove(idTag: string, actor: Actor): Promise<IdTagView> {
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await this.find(trx, idTag);
      if (row === undefined) return null;
      await trx.deleteFrom('ocpp_id_tags').where('id_tag', '=', row.id_tag).execute();
      await writeAudit(trx, {
        actor,
        action: 'id-tag.remove',
        target: row.id_tag,
        before: view(row),
        after: null,
      });
      return view(row);
    });
    if (result === null) throw new NotFoundError(`no id tag ${idTag}`);
    return result;
  }

  /** The idTagInfo for an Authorize: an unknown tag is Invalid, an Accepted one past its expiry Expired. */
  async authorize(idTag: string, now: Date = new Date()): Promise<IdTagInfo> {
    const row = await this.find(this.db, idTag);
    if (row === undefined) return { status: 'Invalid' };
    const expired = row.expiry_date !== null && row.expiry_date <= now.toISOString();
    return {
      status: row.status === 'Accepted' && expired ? 'Expired' : (row.status as IdTagStatus),
      ...(row.parent_id_tag === null ? {} : { parentIdTag: row.parent_id_tag }),
      ...(row.expiry_date === null ? {} : { expiryDate: row.expiry_date }),
    };
  }

  /**
   * The tag, whatever the case it is given in: OCPP 1.6 types an IdToken as CiString20Type, a
   * case-insensitive string. Both sides are folded by the database's lower(), so a backend folds alike.
   */
  private find(db: Kysely<OcppDatabase>, idTag: string): Promise<Row | undefined> {
    return db
      .selectFrom('ocpp_id_tags')
      .selectAll()
      .where(sql`lower(id_tag)`, '=', sql<string>`lower(${idTag})`)
      .orderBy('id_tag')
      .executeTakeFirst();
  }
}
