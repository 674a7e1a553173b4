import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Kysely, type Selectable } from 'kysely';
import { BatchInsert, GroupCommit, newId } from '#broker/store';
import { type OcppDatabase, type OcppMeterValuesTable } from './ocpp.schema.js';
import { type MeterValueInput, type MeterValueView } from './ocpp.types.js';

type Row = Selectable<OcppMeterValuesTable>;

function view(row: Row): MeterValueView {
  const optional = (value: string | null) => value ?? undefined;
  return {
    id: row.id,
    identity: row.identity,
    connectorId: row.connector_id,
    transactionId: row.transaction_id,
    sampledAt: row.sampled_at,
    value: row.value,
    measurand: optional(row.measurand),
    unit: optional(row.unit),
    phase: optional(row.phase),
    context: optional(row.context),
    location: optional(row.location),
    format: optional(row.format),
  };
}

const COLUMNS = [
  'id',
  'identity',
  'connector_id',
  'transaction_id',
  'sampled_at',
  'value',
  'measurand',
  'unit',
  'phase',
  'context',
  'location',
  'format',
] as const;

/** The calls' values as one list, in order (a loop: V8's Array.prototype.flat took 0.1 µs a row; one call's as is). */
function concat(calls: readonly (readonly unknown[])[]): readonly unknown[] {
  if (calls.length === 1) return calls[0] ?? [];
  const values: unknown[] = [];
  for (const call of calls) for (const value of call) values.push(value);
  return values;
}

/**
 * Rows made per turn of the event loop: a MeterValues of 1,000 sampled values spent a millisecond of
 * its message's turn making its rows (an id each) before the first insert. The largest BatchInsert chunk.
 */
const ROWS_PER_TURN = 128;

/** What storing one call's sampled values took. */
export interface StoredMeterValues {
  readonly rows: number;
  /**
   * The event loop's time spent on its rows after the call's own turn (made, then inserted by
   * BatchInsert.run): the caller charges it to the sender.
   */
  readonly loopMs: number;
}

/** Sampled values, one row each, in the order the charge point sent them. */
export class OcppMeterValuesRepository {
  /** Every column, in COLUMNS order; one per repository, since the SQL text is the dialect's. */
  private readonly inserts = new BatchInsert<OcppDatabase, Row>(
    (db, rows) => db.insertInto('ocpp_meter_values').values(rows),
    COLUMNS,
  );
  /**
   * The values of one tick's calls are committed in one transaction; each call's rows stay together,
   * and each call is told its rows' share of the loop time the inserts took.
   */
  private readonly batches = new GroupCommit<readonly unknown[]>(
    (calls) =>
      this.db.transaction().execute((trx) => {
        const values = concat(calls);
        return this.inserts.runValues(trx, values, values.length / COLUMNS.length);
      }),
    200,
  );

  constructor(private readonly db: Kysely<OcppDatabase>) {}

  /**
   * Stores the sampled values once committed: how many rows, and their share of the loop's time. Past
   * ROWS_PER_TURN, the rows are made that many a turn; they go to the batch together, in order, once
   * all are made.
   */
  async add(
    identity: string,
    connectorId: number,
    transactionId: number | null,
    meterValues: readonly MeterValueInput[],
  ): Promise<StoredMeterValues> {
    // The rows' values straight into one list, in COLUMNS order, not an object per row: the list is
    // kept across the store's awaits, and a row object each (1,000 for a large MeterValues) kept
    // young-generation collections busy.
    const values: unknown[] = [];
    let rows = 0;
    // The first turn is the caller's, which it measures itself.
    let madeMs = 0;
    let turnStarted = -1;
    for (const mv of meterValues) {
      for (const sv of mv.sampledValue) {
        if (rows > 0 && rows % ROWS_PER_TURN === 0) {
          if (turnStarted >= 0) madeMs += performance.now() - turnStarted;
          await nextTurn();
          turnStarted = performance.now();
        }
        values.push(
          newId(),
          identity,
          connectorId,
          transactionId,
          mv.timestamp,
          sv.value,
          sv.measurand ?? null,
          sv.unit ?? null,
          sv.phase ?? null,
          sv.context ?? null,
          sv.location ?? null,
          sv.format ?? null,
        );
        rows++;
      }
    }
    if (turnStarted >= 0) madeMs += performance.now() - turnStarted;
    if (rows === 0) return { rows: 0, loopMs: 0 };
    const loopMs = await this.batches.add(values, rows);
    return { rows, loopMs: madeMs + loopMs };
  }

  /** Waits for rows not yet written. */
  flush(): Promise<void> {
    return this.batches.drain();
  }

  /** Oldest first, by transaction or by charge point. */
  async list(options: {
    readonly transactionId?: number | undefined;
    readonly identity?: string | undefined;
    readonly limit: number;
  }): Promise<MeterValueView[]> {
    let query = this.db.selectFrom('ocpp_meter_values').selectAll().orderBy('id').limit(options.limit);
    if (options.transactionId !== undefined)
      query = query.where('transaction_id', '=', options.transactionId);
    if (options.identity !== undefined) query = query.where('identity', '=', options.identity);
    return (await query.execute()).map(view);
  }
}
