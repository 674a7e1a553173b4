import { setImmediate as nextTurn } from 'node:timers/promises';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';

/**
 * Chunk sizes, largest first: any batch is cut into a few statements of these sizes, so a handful of
 * SQL texts serve every batch and the prepared-statement cache keeps each of them. Powers of two: a
 * batch of up to 255 rows takes one statement per bit of its size (117 rows: 5, where sizes 128, 32,
 * 8, 2, 1 took 8), and each statement costs a round through the query executor.
 */
const CHUNKS = [128, 64, 32, 16, 8, 4, 2, 1] as const;

/**
 * Multi-row inserts of one fixed shape, built by Kysely once per chunk size and then run with new
 * parameters. Building a large insert through the query builder (an operation node per value, each
 * frozen, then compiled) cost more than the database's own work on the OCPP hot path, while the SQL of
 * a given row count never changes. The dialect still writes the SQL, so both backends keep working;
 * that text is the dialect's, so an instance serves one database (and its transactions) only.
 */
export class BatchInsert<DB, Row> {
  private readonly sql = new Map<number, string>();

  constructor(
    /** The insert, as the query builder would write it for these rows (its only parameters: their values). */
    private readonly build: (db: Kysely<DB>, rows: readonly Row[]) => Compilable,
    /** The columns, in the order the insert lists them: the order of each row's values. */
    private readonly columns: readonly (keyof Row & string)[],
    /**
     * Each row's values in that order, for run(); a hot caller spells them out, since a load by a
     * computed key (the default) is megamorphic.
     */
    private readonly values: (row: Row) => readonly unknown[] = (row) => columns.map((column) => row[column]),
  ) {}

  /** Inserts the rows in order: runValues with their values. */
  run(db: Kysely<DB>, rows: readonly Row[]): Promise<number> {
    // A loop, not rows.flatMap(this.values): V8's flatMap took about a microsecond per row.
    const values: unknown[] = [];
    for (const row of rows) for (const value of this.values(row)) values.push(value);
    return this.runValues(db, values, rows.length);
  }

  /**
   * Inserts `rowCount` rows given as their values alone, row after row, each in `columns` order: a
   * caller with many rows (a MeterValues of 1,000 sampled values) then makes no object per row. The
   * rows go in a few statements at a time, in whatever transaction `db` is; resolves with the event
   * loop's time the statements took: the part of each call before it awaits, which on SQLite (in a
   * transaction, where the connection is already held) is the whole statement, and on PostgreSQL
   * only the sending of it. Between statements the loop takes a turn: a thousand rows in one go
   * would otherwise hold every other client for milliseconds.
   */
  async runValues(db: Kysely<DB>, values: readonly unknown[], rowCount: number): Promise<number> {
    const width = this.columns.length;
    if (values.length !== rowCount * width) {
      throw new Error(`BatchInsert: ${values.length} values are not ${rowCount} rows of ${width}`);
    }
    let loopMs = 0;
    let offset = 0;
    for (const size of CHUNKS) {
      while (rowCount - offset >= size) {
        if (offset > 0) await nextTurn();
        const parameters = values.slice(offset * width, (offset + size) * width);
        const started = performance.now();
        const done = db.executeQuery(CompiledQuery.raw(this.sqlFor(db, size), parameters));
        loopMs += performance.now() - started;
        await done;
        offset += size;
      }
    }
    return loopMs;
  }

  /**
   * The SQL of `rowCount` rows, built once. The reuse is only sound if the builder's parameters are
   * exactly the rows' values in `columns` order, and `values` gives them in that order too: checked on
   * rows whose every value is a distinct marker, so that no data can hide a wrong order.
   */
  private sqlFor(db: Kysely<DB>, rowCount: number): string {
    let sql = this.sql.get(rowCount);
    if (sql === undefined) {
      const markers: string[] = [];
      const rows: Row[] = [];
      for (let i = 0; i < rowCount; i++) {
        const row: Record<string, unknown> = {};
        for (const column of this.columns) {
          const marker = `BatchInsert row ${i} ${column}`;
          row[column] = marker;
          markers.push(marker);
        }
        rows.push(row as Row);
      }
      const compiled = this.build(db, rows).compile();
      const spelled = rows.flatMap((row) => this.values(row));
      if (!sameValues(compiled.parameters, markers) || !sameValues(spelled, markers)) {
        throw new Error('BatchInsert: the insert has parameters other than the row values in column order');
      }
      sql = compiled.sql;
      this.sql.set(rowCount, sql);
    }
    return sql;
  }
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
