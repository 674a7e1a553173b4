import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';

/** Opens the broker's SQLite file (creating it and its folder) with the settings every connection to it uses. */
export function openSqliteFile(path: string): SqliteDatabase.Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  sqlite.pragma('journal_mode = WAL');
  // Each commit reaches the disk before it returns, so nothing acknowledged is lost to a power cut.
  // Set explicitly: better-sqlite3 builds SQLite to open a file already in WAL mode with NORMAL, which
  // leaves the latest commits to the OS's page cache.
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}
