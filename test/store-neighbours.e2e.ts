import { describe, it } from 'node:test';
import pg from 'pg';
import { BrokerStore } from '#broker/store';
import { createTestSchema, POSTGRES_URL } from './support/postgres.js';

/**
 * Several brokers (or test suites) share one PostgreSQL database, each in its own schema. Kysely's
 * own introspection, which its migrator uses to find its tables, looks at every schema of the
 * database and calls functions that take a schema by name: a neighbour dropping its schema meanwhile
 * made a broker's boot fail with `schema "<the neighbour's>" does not exist`.
 */
describe('store on PostgreSQL beside neighbours that come and go', () => {
  it('migrations succeed while other schemas of the database are dropped', async () => {
    const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
    await admin.connect();
    try {
      for (let round = 0; round < 5; round++) {
        const neighbours = Array.from({ length: 12 }, (_, i) => `n_${process.pid}_${round}_${i}`);
        for (const name of neighbours) {
          await admin.query(`create schema ${name}; create table ${name}.t (id serial primary key)`);
        }
        const own = await createTestSchema();
        try {
          const dropping = (async () => {
            for (const name of neighbours) await admin.query(`drop schema ${name} cascade`);
          })();
          const [store] = await Promise.all([
            BrokerStore.open({ sqlitePath: 'unused', databaseUrl: own.url }),
            dropping,
          ]);
          await store.close();
        } finally {
          await own.drop();
          for (const name of neighbours) await admin.query(`drop schema if exists ${name} cascade`);
        }
      }
    } finally {
      await admin.end();
    }
  });
});
