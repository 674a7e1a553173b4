import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { DurableSqliteDialect } from './durable-sqlite-dialect.js';
import { withStatementCache } from './statement-cache.js';
import { CommitNotDurableError } from './errors.js';
import { WalSync } from './wal-sync.js';
import { heldSync, isPending } from './wal-sync.spec-support.js';

interface Tables {
  readings: { id: number; value: string };
}

describe('DurableSqliteDialect', { timeout: 10_000 }, () => {
  let dir = '';
  let path = '';
  let held: ReturnType<typeof heldSync>;
  let db: Kysely<Tables>;
  let destroyed = false;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'broker-durable-'));
    path = join(dir, 'broker.db');
    const sqlite = new SqliteDatabase(path);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.exec('create table readings (id integer primary key, value text not null)');
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    held = heldSync();
    destroyed = false;
    const wal = await WalSync.open(`${path}-wal`, held.syncFile);
    db = new Kysely<Tables>({ dialect: new DurableSqliteDialect(withStatementCache(sqlite), wal) });
  });

  afterEach(async () => {
    held.started.forEach((fsync) => fsync.release());
    if (!destroyed) await db.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  const count = async () =>
    (
      await db
        .selectFrom('readings')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n;

  it('a write settles after an fsync of the WAL; reads and other writes go on meanwhile', async () => {
    const write = db.insertInto('readings').values({ id: 1, value: 'a' }).execute();
    await held.startedCount(1);
    assert.equal(held.started[0]?.inode, (await stat(`${path}-wal`)).ino, 'the WAL file is synced');
    assert.ok(await isPending(write), 'not acknowledged before the fsync ends');
    assert.equal(await count(), 1, 'committed: a read sees it, and does not wait for the fsync');
    const second = db.insertInto('readings').values({ id: 2, value: 'b' }).execute();
    assert.ok(await isPending(second));
    held.started[0]?.release();
    await write;
    await held.startedCount(2);
    assert.ok(await isPending(second), 'the second write waits for an fsync begun after its commit');
    held.started[1]?.release();
    await second;
    assert.equal(await count(), 2);
  });

  it('a transaction syncs once, after its commit; reads and read-only transactions sync nothing', async () => {
    await count();
    await db.transaction().execute(async (trx) => {
      await trx.selectFrom('readings').selectAll().execute();
    });
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('readings').values({ id: 1, value: 'a' }).execute();
      await trx.insertInto('readings').values({ id: 2, value: 'b' }).execute();
      assert.equal(held.started.length, 0, 'nothing is synced inside the transaction');
    });
    await held.startedCount(1);
    held.started[0]?.release();
    await transaction;
    await sql`select 1`.execute(db);
    assert.equal(await count(), 2);
    assert.equal(held.started.length, 1);
  });

  it('a write that returns rows is a write too', async () => {
    const write = db.insertInto('readings').values({ id: 1, value: 'a' }).returning('id').execute();
    await held.startedCount(1);
    assert.ok(await isPending(write));
    held.started[0]?.release();
    assert.deepEqual(await write, [{ id: 1 }]);
  });

  it('a rolled-back transaction syncs nothing and fails with its own error', async () => {
    const first = db.insertInto('readings').values({ id: 1, value: 'a' }).execute();
    await held.startedCount(1);
    held.started[0]?.release();
    await first;
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('readings').values({ id: 2, value: 'b' }).execute();
        await trx.insertInto('readings').values({ id: 1, value: 'again' }).execute();
      }),
      /UNIQUE constraint failed/,
    );
    assert.equal(held.started.length, 1);
    assert.equal(await count(), 1);
  });

  it('savepoints of a controlled transaction work', async () => {
    const trx = await db.startTransaction().execute();
    await trx.insertInto('readings').values({ id: 1, value: 'a' }).execute();
    const inner = await trx.savepoint('inner').execute();
    await inner.insertInto('readings').values({ id: 2, value: 'b' }).execute();
    await inner.rollbackToSavepoint('inner').execute();
    const committed = trx.commit().execute();
    await held.startedCount(1);
    held.started[0]?.release();
    await committed;
    assert.equal(await count(), 1);
  });

  it('the same write again, its statement from the cache, is synced again', async () => {
    for (const id of [1, 2]) {
      const write = db.insertInto('readings').values({ id, value: 'a' }).execute();
      await held.startedCount(id);
      held.started[id - 1]?.release();
      await write;
    }
    assert.equal(held.started.length, 2);
  });

  it('a rolled-back transaction inside connection() keeps the write made before it', async () => {
    const done = db.connection().execute(async (conn) => {
      await conn.insertInto('readings').values({ id: 1, value: 'a' }).execute();
      await conn
        .transaction()
        .execute(async (trx) => {
          await trx.insertInto('readings').values({ id: 1, value: 'again' }).execute();
        })
        .catch(() => undefined);
    });
    await held.startedCount(1);
    held.started[0]?.release();
    await done;
  });

  it('closing waits for a transaction under way and for its sync', async () => {
    let commit: () => void = () => undefined;
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('readings').values({ id: 1, value: 'a' }).execute();
      await new Promise<void>((resolve) => (commit = resolve));
    });
    await isPending(transaction);
    const closing = db.destroy();
    assert.ok(await isPending(closing), 'the transaction holds the connection');
    commit();
    await held.startedCount(1);
    assert.ok(await isPending(closing), 'its sync runs on the open WAL file');
    held.started[0]?.release();
    await transaction;
    await closing;
    await assert.rejects(db.selectFrom('readings').selectAll().execute(), /destroyed/);
    destroyed = true;
    const reopened = new SqliteDatabase(path);
    assert.deepEqual(reopened.prepare('select id from readings').all(), [{ id: 1 }]);
    reopened.close();
  });

  it('after a failed fsync, the write fails though committed, and later writes fail before they commit', async () => {
    const write = db.insertInto('readings').values({ id: 1, value: 'a' }).execute();
    await held.startedCount(1);
    held.started[0]?.fail(new Error('EIO: i/o error, fsync'));
    await assert.rejects(write, CommitNotDurableError);
    assert.equal(await count(), 1, 'the first write was committed');
    await assert.rejects(
      db.insertInto('readings').values({ id: 2, value: 'b' }).execute(),
      CommitNotDurableError,
    );
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('readings').values({ id: 3, value: 'c' }).execute();
      }),
      CommitNotDurableError,
    );
    assert.equal(await count(), 1, 'nothing after the failure was committed; reads still work');
    assert.equal(held.started.length, 1);
  });
});
