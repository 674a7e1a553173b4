import type BetterSqlite3 from 'better-sqlite3';

/** What Kysely's SQLite dialect needs of a database, with better-sqlite3's statements (their `readonly`). */
export interface PreparingDatabase {
  prepare(sql: string): BetterSqlite3.Statement;
  close(): void;
}

/** Distinct statements kept: the store's queries are a few dozen shapes, row counts of batches aside. */
const MAX_STATEMENTS = 256;

/**
 * The better-sqlite3 database as Kysely's SQLite dialect sees it, with prepared statements kept by
 * their SQL (least recently used dropped first). Kysely's driver prepares every query anew, and
 * SQLite's compile of a batch insert cost about as much as running it. Reuse is safe: the dialect
 * runs one query at a time on its single connection.
 */
export function withStatementCache(db: BetterSqlite3.Database, max = MAX_STATEMENTS): PreparingDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => db.close(),
    prepare(sql: string): BetterSqlite3.Statement {
      let statement = statements.get(sql);
      if (statement !== undefined) {
        statements.delete(sql);
      } else {
        statement = db.prepare(sql);
        if (statements.size >= max) statements.delete(statements.keys().next().value as string);
      }
      statements.set(sql, statement);
      return statement;
    },
  };
}
