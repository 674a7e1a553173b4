import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from './database.js';

describe('openDatabase (SQLite file)', () => {
  it('commits durably (WAL, synchronous FULL) on the first start and on every restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'broker-db-'));
    try {
      const config = { sqlitePath: join(dir, 'broker.db') };
      // better-sqlite3 builds SQLite so that a file already in WAL mode opens with synchronous
      // NORMAL: without an explicit setting, a restarted broker would acknowledge commits it had not
      // yet flushed to disk.
      for (const start of ['first start', 'restart']) {
        const { db } = await openDatabase(config);
        try {
          const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute(db);
          const sync = await sql<{ synchronous: number }>`pragma synchronous`.execute(db);
          assert.equal(mode.rows[0]?.journal_mode, 'wal', start);
          assert.equal(sync.rows[0]?.synchronous, 2, `${start}: synchronous = FULL`);
        } finally {
          await db.destroy();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
