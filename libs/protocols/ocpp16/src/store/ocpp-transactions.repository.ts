import { sql, type Kysely, type Selectable } from 'kysely';
import { type OcppDatabase, type OcppTransactionsTable } from './ocpp.schema.js';
import { type TransactionView } from './ocpp.types.js';

type Row = Selectable<OcppTransactionsTable>;

function view(row: Row): TransactionView {
  return {
    id: row.id,
    identity: row.identity,
    connectorId: row.connector_id,
    idTag: row.id_tag,
    startStatus: row.start_status,
    meterStart: row.meter_start,
    startedAt: row.started_at,
    reservationId: row.reservation_id,
    meterStop: row.meter_stop,
    stoppedAt: row.stopped_at,
    stopReason: row.stop_reason,
    stopIdTag: row.stop_id_tag,
  };
}

export interface StartInput {
  readonly identity: string;
  readonly connectorId: number;
  readonly idTag: string;
  readonly startStatus: string;
  readonly meterStart: number;
  readonly startedAt: string;
  readonly reservationId?: number | undefined;
}

export interface StopInput {
  readonly identity: string;
  readonly id: number;
  readonly meterStop: number;
  readonly stoppedAt: string;
  readonly reason?: string | undefined;
  readonly idTag?: string | undefined;
}

/** Charging transactions; ids come from a counter row, so they are unique across broker nodes. */
export class OcppTransactionsRepository {
  constructor(private readonly db: Kysely<OcppDatabase>) {}

  /**
   * A new transaction, or the one this start already made: a charge point resends a StartTransaction
   * whose answer it never got (OCPP 1.6 has it queue and retry transaction-related messages), and
   * that resend must get the same transaction id, not a second transaction (SteVe matches resends the
   * same way: charge point, connector, id tag, meter and timestamp).
   */
  async start(input: StartInput): Promise<TransactionView> {
    return this.db.transaction().execute(async (trx) => {
      const resent = await trx
        .selectFrom('ocpp_transactions')
        .selectAll()
        .where('identity', '=', input.identity)
        .where('connector_id', '=', input.connectorId)
        .where('id_tag', '=', input.idTag)
        .where('meter_start', '=', input.meterStart)
        .where('started_at', '=', input.startedAt)
        .executeTakeFirst();
      if (resent !== undefined) return view(resent);
      const { value: id } = await trx
        .updateTable('ocpp_counters')
        .set((eb) => ({ value: eb('value', '+', 1) }))
        .where('name', '=', 'transaction')
        .returning('value')
        .executeTakeFirstOrThrow();
      const row: Row = {
        id,
        identity: input.identity,
        connector_id: input.connectorId,
        id_tag: input.idTag,
        start_status: input.startStatus,
        meter_start: input.meterStart,
        started_at: input.startedAt,
        reservation_id: input.reservationId ?? null,
        meter_stop: null,
        stopped_at: null,
        stop_reason: null,
        stop_id_tag: null,
      };
      await trx.insertInto('ocpp_transactions').values(row).execute();
      return view(row);
    });
  }

  /** Ends an ongoing transaction of this charge point; null when it has none by that id. */
  async stop(input: StopInput): Promise<TransactionView | null> {
    const result = await this.db
      .updateTable('ocpp_transactions')
      .set({
        meter_stop: input.meterStop,
        stopped_at: input.stoppedAt,
        stop_reason: input.reason ?? null,
        stop_id_tag: input.idTag ?? null,
      })
      .where('id', '=', input.id)
      .where('identity', '=', input.identity)
      .where('stopped_at', 'is', null)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n) return null;
    return this.get(input.id);
  }

  /**
   * Is this id tag, in any case, already charging somewhere (StartTransaction answers ConcurrentTx)? Only a
   * transaction accepted at its start counts: one refused there holds no energy transfer, and an
   * unstopped refused one would otherwise lock the tag out.
   */
  async hasOngoing(idTag: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('ocpp_transactions')
      .select('id')
      .where(sql`lower(id_tag)`, '=', sql<string>`lower(${idTag})`)
      .where('start_status', '=', 'Accepted')
      .where('stopped_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }

  async get(id: number): Promise<TransactionView | null> {
    const row = await this.db
      .selectFrom('ocpp_transactions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? null : view(row);
  }

  /** Newest first. */
  async list(options: {
    readonly identity?: string | undefined;
    readonly ongoing?: boolean | undefined;
    readonly limit: number;
  }): Promise<TransactionView[]> {
    let query = this.db
      .selectFrom('ocpp_transactions')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(options.limit);
    if (options.identity !== undefined) query = query.where('identity', '=', options.identity);
    if (options.ongoing === true) query = query.where('stopped_at', 'is', null);
    if (options.ongoing === false) query = query.where('stopped_at', 'is not', null);
    return (await query.execute()).map(view);
  }
}
