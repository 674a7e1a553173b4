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
    /** Each row's values in the order the insert lists its columns. */
    private readonly values: (row: Row) => readonly unknown[],
  ) {}

  /**
   * Inserts the rows in order, a few statements at a time, in whatever transaction `db` is, and
   * resolves with the event loop's time the statements took: the part of each call before it awaits,
   * which on SQLite (in a transaction, where the connection is already held) is the whole statement,
   * and on PostgreSQL only the sending of it. Between statements the loop takes a turn: a thousand
   * rows in one go (one large MeterValues) would otherwise hold every other client for milliseconds.
   */
  async run(db: Kysely<DB>, rows: readonly Row[]): Promise<number> {
    let loopMs = 0;
    let offset = 0;
    for (const size of CHUNKS) {
      while (rows.length - offset >= size) {
        if (offset > 0) await nextTurn();
        const chunk = rows.slice(offset, offset + size);
        // A loop, not chunk.flatMap(this.values): V8's flatMap took about a microsecond per row.
        const parameters: unknown[] = [];
        for (const row of chunk) for (const value of this.values(row)) parameters.push(value);
        const started = performance.now();
        const done = db.executeQuery(CompiledQuery.raw(this.sqlFor(db, chunk, parameters), parameters));
        loopMs += performance.now() - started;
        await done;
        offset += size;
      }
    }
    return loopMs;
  }

  private sqlFor(db: Kysely<DB>, chunk: readonly Row[], parameters: readonly unknown[]): string {
    let sql = this.sql.get(chunk.length);
    if (sql === undefined) {
      const compiled = this.build(db, chunk).compile();
      // The reuse is only sound if the builder's parameters are exactly the rows' values, in our order.
      const same =
        compiled.parameters.length === parameters.length &&
        compiled.parameters.every((value, i) => value === parameters[i]);
      if (!same) throw new Error('BatchInsert: the insert has parameters other than the row values');
      sql = compiled.sql;
      this.sql.set(chunk.length, sql);
    }
    return sql;
  }
}
