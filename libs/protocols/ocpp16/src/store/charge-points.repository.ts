import { type Kysely, type Selectable } from 'kysely';
import {
  ConflictError,
  hashPassword,
  isUniqueViolation,
  NotFoundError,
  timestamp,
  verifyPassword,
  writeAudit,
  type Actor,
} from '#broker/store';
import { type ChargePointsTable, type OcppDatabase } from './ocpp.schema.js';
import { type ChargePointView } from './ocpp.types.js';

type Row = Selectable<ChargePointsTable>;

function view(row: Row): ChargePointView {
  return {
    identity: row.identity,
    allowed: row.allowed === 1,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface ChargePointChange {
  readonly allowed?: boolean | undefined;
  /** A new Basic-auth password; null removes it (the charge point then connects without one). */
  readonly password?: string | null | undefined;
}

export type ChargePointAuth = 'unknown' | 'not-allowed' | 'no-password' | 'bad-password' | 'ok';

/** OCPP charge points the central system knows. The Basic-auth password is stored as scrypt. */
export class ChargePointsRepository {
  constructor(private readonly db: Kysely<OcppDatabase>) {}

  async list(): Promise<ChargePointView[]> {
    return (await this.db.selectFrom('charge_points').selectAll().orderBy('identity').execute()).map(view);
  }

  async get(identity: string): Promise<ChargePointView> {
    const row = await this.find(identity);
    if (row === undefined) throw new NotFoundError(`no charge point ${identity}`);
    return view(row);
  }

  async create(
    input: { readonly identity: string; readonly allowed: boolean; readonly password: string | null },
    actor: Actor,
  ): Promise<ChargePointView> {
    const now = timestamp();
    const row: Row = {
      identity: input.identity,
      allowed: input.allowed ? 1 : 0,
      password_hash: input.password === null ? null : await hashPassword(Buffer.from(input.password)),
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        await trx.insertInto('charge_points').values(row).execute();
        await writeAudit(trx, {
          actor,
          action: 'charge-point.create',
          target: row.identity,
          before: null,
          after: view(row),
        });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError(`charge point ${input.identity} exists`);
      throw err;
    }
    return view(row);
  }

  async update(identity: string, change: ChargePointChange, actor: Actor): Promise<ChargePointView> {
    const passwordHash =
      change.password === undefined || change.password === null
        ? change.password
        : await hashPassword(Buffer.from(change.password));
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await this.find(identity, trx);
      if (row === undefined) return null;
      const next: Row = {
        ...row,
        allowed: change.allowed === undefined ? row.allowed : change.allowed ? 1 : 0,
        password_hash: passwordHash === undefined ? row.password_hash : passwordHash,
        updated_at: timestamp(),
      };
      await trx.updateTable('charge_points').set(next).where('identity', '=', identity).execute();
      await writeAudit(trx, {
        actor,
        action: 'charge-point.update',
        target: identity,
        before: view(row),
        after: view(next),
      });
      return view(next);
    });
    if (result === null) throw new NotFoundError(`no charge point ${identity}`);
    return result;
  }

  async remove(identity: string, actor: Actor): Promise<ChargePointView> {
    const result = await this.db.transaction().execute(async (trx) => {
      const row = await this.find(identity, trx);
      if (row === undefined) return null;
      await trx.deleteFrom('charge_points').where('identity', '=', identity).execute();
      await writeAudit(trx, {
        actor,
        action: 'charge-point.remove',
        target: identity,
        before: view(row),
        after: null,
      });
      return view(row);
    });
    if (result === null) throw new NotFoundError(`no charge point ${identity}`);
    return result;
  }

  /**
   * The password is compared as bytes (OCPP keys need not be UTF-8) in constant time. With
   * `requirePassword` (OCPP security profiles 1 and 2) a charge point without a stored key is 'no-password';
   * with `certificateVerified` (profile 3: a TLS client certificate proved who it is) only whether it
   * is known and allowed counts.
   */
  async authenticate(
    identity: string,
    password: Uint8Array | null,
    options: { readonly requirePassword?: boolean; readonly certificateVerified?: boolean } = {},
  ): Promise<ChargePointAuth> {
    const row = await this.find(identity);
    if (row === undefined) return 'unknown';
    if (row.allowed !== 1) return 'not-allowed';
    if (options.certificateVerified === true) return 'ok';
    if (row.password_hash === null) return options.requirePassword === true ? 'no-password' : 'ok';
    if (password === null || !(await verifyPassword(password, row.password_hash))) return 'bad-password';
    return 'ok';
  }

  private find(identity: string, db: Kysely<OcppDatabase> = this.db): Promise<Row | undefined> {
    return db.selectFrom('charge_points').selectAll().where('identity', '=', identity).executeTakeFirst();
  }
}
