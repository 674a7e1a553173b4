import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestSchema, type TestSchema } from './postgres.js';

/** A store configuration on a fresh database of one backend, and how to remove that database. */
export interface StoreBackend {
  readonly name: string;
  open(): Promise<{ config: { sqlitePath: string; databaseUrl?: string }; cleanup(): Promise<void> }>;
}

/** Both backends the store runs on: suites of the store and of what keeps state in it run on each. */
export const storeBackends: StoreBackend[] = [
  {
    name: 'SQLite file',
    async open() {
      const dir = await mkdtemp(join(tmpdir(), 'broker-store-'));
      return {
        config: { sqlitePath: join(dir, 'nested', 'broker.db') },
        cleanup: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const schema: TestSchema = await createTestSchema();
      return { config: { sqlitePath: 'unused', databaseUrl: schema.url }, cleanup: () => schema.drop() };
    },
  },
];

/** An ISO time `ms` from now (negative: in the past). */
export const later = (ms: number): string => new Date(Date.now() + ms).toISOString();
