import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './database.js';

describe('openDatabase (SQLite file)', () => {
  it('runs in WAL mode, synchronous NORMAL, on the first start and on every restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'broker-db-'));
    try {
      const config = { sqlitePath: join(dir, 'broker.db') };
      // A commit writes the WAL; WalSync syncs it before the write is acknowledged (see its spec and
      // DurableSqliteDialect's).
      for (const start of ['first start', 'restart']) {
        const { db } = await openDatabase(config);
        try {
          const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
          const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
          assert.equal(mode.rows[0]?.journal_mode, 'wal', start);
          assert.equal(sync.rows[0]?.synchronous, 1, `${start}: synchronous = NORMAL`);
        } finally {
          await db.destroy();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('syncs the WAL next to the file SQLite opened, when the configured path is a link to it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'broker-db-'));
    try {
      await mkdir(join(dir, 'data'));
      await symlink(join(dir, 'data', 'broker.db'), join(dir, 'broker.db'));
      const { db } = await openDatabase({ sqlitePath: join(dir, 'broker.db') });
      try {
        await sql`create table readings (value text)`.execute(db);
        await sql`insert into readings values ('a')`.execute(db);
        assert.ok((await readdir(join(dir, 'data'))).includes('broker.db-wal'));
        assert.deepEqual((await readdir(dir)).sort(), ['broker.db', 'data']);
      } finally {
        await db.destroy();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
