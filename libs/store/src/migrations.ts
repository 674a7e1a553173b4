import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

// Versioned migrations, applied in name order at start (Kysely's Migrator records them in its own
// table). Never edit one that has shipped: add the next.
//
// 0002_ocpp and 0004_id_tag_case made the OCPP central system's tables, which the OCPP module now
// makes with its own migrations (libs/protocols/ocpp16/src/store/ocpp.migrations.ts). Their names
// stay, doing nothing: the Migrator fails on a database that recorded a migration its list lacks.
const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('origins')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('origin', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addUniqueConstraint('origins_endpoint_origin', ['endpoint', 'origin'])
        .execute();
      await db.schema
        .createTable('credentials')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('username', 'text')
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema
        .createIndex('credentials_token_hash')
        .on('credentials')
        .column('secret_hash')
        .unique()
        .where(sql.ref('kind'), '=', 'token')
        .execute();
      await db.schema
        .createIndex('credentials_active_username')
        .on('credentials')
        .column('username')
        .unique()
        .where(sql<boolean>`kind = 'password' and revoked_at is null`)
        .execute();
      // charge_points, made here before the OCPP module brought its own tables, is now that
      // module's (its 0003_charge_points, which keeps a table this made).
      await db.schema
        .createTable('audit')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target', 'text', (c) => c.notNull())
        .addColumn('before', 'text')
        .addColumn('after', 'text')
        .execute();
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  // These made what the modules' own migrations make now (a database that ran them has it).
  '0002_ocpp': { up: () => Promise.resolve() },
  '0003_wampcra': { up: () => Promise.resolve() },
  '0004_id_tag_case': { up: () => Promise.resolve() },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
