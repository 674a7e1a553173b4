import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import { WalCheckpointer } from './wal-checkpointer.js';

const dir = mkdtempSync(join(tmpdir(), 'wal-checkpointer-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A database in WAL mode as the store opens it, with a table to fill. */
function walDatabase(name: string): { sqlite: SqliteDatabase.Database; path: string } {
  const path = join(dir, name);
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.exec('create table t (v text)');
  return { sqlite, path };
}

/** Polls until `done` or 10 s: the checkpoint thread works on its own schedule. */
async function until(done: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !done(); i++) await sleep(50);
  return done();
}

describe('WalCheckpointer', () => {
  it("moves committed pages into the database file on its own thread, none on the broker's connection", async () => {
    const { sqlite, path } = walDatabase('moves.db');
    const checkpointer = WalCheckpointer.start(sqlite, path, 5000);
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 0);
    const insert = sqlite.prepare('insert into t values (?)');
    // About 8 MB of rows: twice the WAL size at which SQLite would checkpoint inside a COMMIT.
    const row = 'x'.repeat(1000);
    for (let batch = 0; batch < 80; batch++) {
      sqlite.transaction(() => {
        for (let i = 0; i < 100; i++) insert.run(row);
      })();
    }
    assert.ok(await until(() => statSync(path).size > 7_000_000), 'the rows reached the database file');
    await Promise.all([checkpointer.stop(), checkpointer.stop()]);
    assert.equal(checkpointer.failed, null, 'a thread asked to stop is not a failure');
    assert.equal((sqlite.prepare('select count(*) as n from t').get() as { n: number }).n, 8000);
    sqlite.close();
  });

  it("falls back to SQLite's own checkpoints when its thread cannot open the database", async () => {
    const { sqlite } = walDatabase('fallback.db');
    const checkpointer = WalCheckpointer.start(sqlite, join(dir, 'no-such-folder', 'x.db'), 5000);
    assert.ok(await until(() => checkpointer.failed !== null), 'the failure is noticed');
    assert.match(checkpointer.failed ?? '', /directory does not exist|unable to open/);
    assert.equal(sqlite.pragma('wal_autocheckpoint', { simple: true }), 1000);
    await checkpointer.stop();
    sqlite.close();
  });
});
