import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { withStatementCache } from './statement-cache.js';

describe('withStatementCache', () => {
  it('prepares each SQL text once and reuses the statement with new parameters', () => {
    const sqlite = new SqliteDatabase(':memory:');
    let prepared = 0;
    const prepare = sqlite.prepare.bind(sqlite);
    sqlite.prepare = ((sql: string) => (prepared++, prepare(sql))) as typeof sqlite.prepare;
    const db = withStatementCache(sqlite);
    db.prepare('create table t (v integer)').run([]);
    for (let v = 0; v < 5; v++) db.prepare('insert into t (v) values (?)').run([v]);
    assert.deepEqual(db.prepare('select sum(v) as s from t').all([]), [{ s: 10 }]);
    assert.equal(prepared, 3);
    db.close();
  });

  it('keeps at most max statements, dropping the least recently used', () => {
    const sqlite = new SqliteDatabase(':memory:');
    const db = withStatementCache(sqlite, 2);
    const a = db.prepare('select 1');
    const b = db.prepare('select 2');
    assert.equal(db.prepare('select 1'), a, 'a hit keeps the statement');
    db.prepare('select 3');
    assert.equal(db.prepare('select 1'), a, 'the recently used statement stays');
    assert.notEqual(db.prepare('select 2'), b, 'the least recently used one was dropped and prepared anew');
    db.close();
  });
});
