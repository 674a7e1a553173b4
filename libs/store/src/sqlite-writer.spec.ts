import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteFile } from './sqlite-file.js';
import { SqliteWriter } from './sqlite-writer.js';

const INSERT = 'insert into samples (id, value) values (?, ?)';

/** A fresh SQLite file with one table, the writer on it, and the main thread's own connection. */
function fixture() {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-writer-'));
  const file = join(dir, 'store.db');
  const main = openSqliteFile(file);
  main.exec('create table samples (id integer primary key, value text not null)');
  const writer = new SqliteWriter(file);
  const rows = () => main.prepare('select id, value from samples order by id').all();
  const cleanup = async () => {
    await writer.close();
    main.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { writer, rows, cleanup };
}

describe('SqliteWriter', { timeout: 20_000 }, () => {
  it('commits each transaction from its own thread; the main connection reads it once resolved', async () => {
    const { writer, rows, cleanup } = fixture();
    try {
      await writer.transaction([
        { sql: INSERT, parameters: [1, 'one'] },
        { sql: INSERT, parameters: [2, 'two'] },
      ]);
      assert.deepEqual(rows(), [
        { id: 1, value: 'one' },
        { id: 2, value: 'two' },
      ]);
      await Promise.all([
        writer.transaction([{ sql: INSERT, parameters: [3, 'three'] }]),
        writer.transaction([{ sql: INSERT, parameters: [4, 'four'] }]),
      ]);
      assert.equal(rows().length, 4);
    } finally {
      await cleanup();
    }
  });

  it("rolls a failing transaction back whole and rejects with SQLite's reason; the next one runs", async () => {
    const { writer, rows, cleanup } = fixture();
    try {
      await assert.rejects(
        writer.transaction([
          { sql: INSERT, parameters: [1, 'kept only if all succeed'] },
          { sql: INSERT, parameters: [2, null] },
        ]),
        /NOT NULL constraint failed: samples\.value/,
      );
      assert.deepEqual(rows(), []);
      await writer.transaction([{ sql: INSERT, parameters: [1, 'after'] }]);
      assert.deepEqual(rows(), [{ id: 1, value: 'after' }]);
    } finally {
      await cleanup();
    }
  });

  it('fails the waiting writes when its thread cannot open the file, and every write once closed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-writer-'));
    // A file where the database's folder should be: the thread cannot create that folder.
    writeFileSync(join(dir, 'not-a-folder'), '');
    const writer = new SqliteWriter(join(dir, 'not-a-folder', 'store.db'));
    try {
      await assert.rejects(
        writer.transaction([{ sql: INSERT, parameters: [1, 'x'] }]),
        /the SQLite writer thread stopped: .*not-a-folder/,
      );
      await writer.close();
      await assert.rejects(writer.transaction([{ sql: INSERT, parameters: [1, 'x'] }]), /closed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
