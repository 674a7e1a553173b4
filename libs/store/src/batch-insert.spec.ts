import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { BatchInsert } from './batch-insert.js';

interface Row {
  readonly identity: string;
  readonly last_heartbeat_at: string;
  readonly updated_at: string;
}

const COLUMNS = ['identity', 'last_heartbeat_at', 'updated_at'] as const;

interface Tables {
  ocpp_stations: Row;
}

/** A real SQLite database with the one table these tests write. */
async function database(): Promise<Kysely<Tables>> {
  const db = new Kysely<Tables>({
    dialect: new SqliteDialect({ database: new SqliteDatabase(':memory:') }),
  });
  await sql`create table ocpp_stations (identity text primary key, last_heartbeat_at text, updated_at text not null)`.execute(
    db,
  );
  return db;
}

function rows(count: number, at: string): Row[] {
  return Array.from({ length: count }, (_, i) => ({
    identity: `CP-${i}`,
    last_heartbeat_at: at,
    updated_at: at,
  }));
}

function upserts(onBuild: (rowCount: number) => void = () => undefined): BatchInsert<Tables, Row> {
  return new BatchInsert<Tables, Row>(
    (db, batch) => {
      onBuild(batch.length);
      return db
        .insertInto('ocpp_stations')
        .values(batch.map((r) => ({ ...r })))
        .onConflict((oc) =>
          oc.column('identity').doUpdateSet((eb) => ({
            last_heartbeat_at: eb.ref('excluded.last_heartbeat_at'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        );
    },
    COLUMNS,
    (row) => [row.identity, row.last_heartbeat_at, row.updated_at],
  );
}

describe('BatchInsert', () => {
  it('lets the event loop take a turn between its statements, so a large batch does not hold it', async () => {
    const raw = new SqliteDatabase(':memory:');
    const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }) });
    await sql`create table ocpp_stations (identity text primary key, last_heartbeat_at text, updated_at text not null)`.execute(
      db,
    );
    const count = (): number =>
      (raw.prepare('select count(*) as n from ocpp_stations').get() as { n: number }).n;
    let storedAtFirstTurn = -1;
    setImmediate(() => (storedAtFirstTurn = count()));
    await upserts().run(db, rows(300, 't'));
    assert.equal(storedAtFirstTurn, 128, 'the first statement, then a turn of the loop');
    assert.equal(count(), 300);
  });

  it('writes every row of batches of any size, the same as the query builder would', async () => {
    const db = await database();
    const insert = upserts();
    for (const count of [0, 1, 3, 37, 300]) {
      await insert.run(db, rows(count, `t${count}`));
      const stored = await db.selectFrom('ocpp_stations').selectAll().orderBy('identity').execute();
      assert.equal(stored.length, count, 'the batches grow, and each upserts the rows of the one before');
      for (let i = 0; i < count; i++) {
        const row = stored.find((r) => r.identity === `CP-${i}`);
        assert.equal(row?.last_heartbeat_at, `t${count}`, `CP-${i} after a batch of ${count}`);
      }
    }
    await db.destroy();
  });

  it('builds the SQL once per chunk size, whatever the batches', async () => {
    const db = await database();
    const built: number[] = [];
    const insert = upserts((n) => built.push(n));
    await insert.run(db, rows(171, 'a'));
    await insert.run(db, rows(171, 'b'));
    await insert.run(db, rows(5, 'c'));
    assert.deepEqual(
      built.sort((x, y) => y - x),
      [128, 32, 8, 4, 2, 1],
      '171 = 128 + 32 + 8 + 2 + 1 and 5 = 4 + 1, each statement used again by the next batch',
    );
    await db.destroy();
  });

  it('refuses an insert whose parameters are not exactly the row values', async () => {
    const db = await database();
    const sloppy = new BatchInsert<Tables, Row>(
      (kysely, batch) =>
        kysely
          .insertInto('ocpp_stations')
          .values(batch.map((r) => ({ ...r })))
          .onConflict((oc) => oc.column('identity').doUpdateSet({ updated_at: 'fixed' })),
      COLUMNS,
      (row) => [row.identity, row.last_heartbeat_at, row.updated_at],
    );
    await assert.rejects(sloppy.run(db, rows(1, 'x')), /parameters other than the row values/);
    const reordered = new BatchInsert<Tables, Row>(
      (kysely, batch) => kysely.insertInto('ocpp_stations').values(batch.map((r) => ({ ...r }))),
      COLUMNS,
      (row) => [row.updated_at, row.identity, row.last_heartbeat_at],
    );
    await assert.rejects(reordered.run(db, rows(1, 'y')), /parameters other than the row values/);
    await db.destroy();
  });

  it('writes rows given as their values alone, row after row in column order', async () => {
    const db = await database();
    const insert = upserts();
    const values = rows(171, 'v').flatMap((r) => [r.identity, r.last_heartbeat_at, r.updated_at]);
    await insert.runValues(db, values, 171);
    const stored = await db.selectFrom('ocpp_stations').selectAll().orderBy('identity').execute();
    assert.equal(stored.length, 171);
    assert.deepEqual(
      stored.find((r) => r.identity === 'CP-170'),
      {
        identity: 'CP-170',
        last_heartbeat_at: 'v',
        updated_at: 'v',
      },
    );
    await assert.rejects(insert.runValues(db, values, 170), /513 values are not 170 rows of 3/);
    await db.destroy();
  });

  it('refuses a builder that lists the columns in another order, even where the data could not show it', async () => {
    const db = await database();
    const swapped = new BatchInsert<Tables, Row>(
      (kysely, batch) =>
        kysely.insertInto('ocpp_stations').values(
          batch.map((r) => ({
            identity: r.identity,
            updated_at: r.updated_at,
            last_heartbeat_at: r.last_heartbeat_at,
          })),
        ),
      COLUMNS,
    );
    // Both times are the same in the row: its own values would come out right in either order.
    await assert.rejects(
      swapped.runValues(db, ['CP-0', 't', 't'], 1),
      /parameters other than the row values/,
    );
    await db.destroy();
  });
});
