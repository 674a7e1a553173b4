import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The machine's PostgreSQL (trust auth). Tests fail, not skip, when it does not answer. */
export const POSTGRES_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestSchema {
  /** A DATABASE_URL whose connections use only this schema. */
  readonly url: string;
  drop(): Promise<void>;
}

/** A fresh schema per suite, so suites running in parallel never see each other's tables. */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await admin.connect();
  try {
    await admin.query(`create schema ${name}`);
  } finally {
    await admin.end();
  }
  const separator = POSTGRES_URL.includes('?') ? '&' : '?';
  return {
    url: `${POSTGRES_URL}${separator}options=${encodeURIComponent(`-c search_path=${name}`)}`,
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        await client.query(`drop schema ${name} cascade`);
      } finally {
        await client.end();
      }
    },
  };
}
