import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';

// Versioned migrations, applied in name order at start (Kysely's Migrator records them in its own
// table). Never edit one that has shipped: add the next.
//
// 0002_ocpp and 0004_id_tag_case make the OCPP central system's tables, whose shapes and repositories
// live in libs/protocols/ocpp16. They stay in this one list: the Migrator keys on the name and fails
// on a database that recorded a migration its list lacks, and every database since holds them between
// 0001_initial and 0003_wampcra; a broker that loads no OCPP module opens such a database too.
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
      await db.schema
        .createTable('charge_points')
        .addColumn('identity', 'text', (c) => c.primaryKey())
        .addColumn('password_hash', 'text')
        .addColumn('allowed', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
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
  '0002_ocpp': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ocpp_stations')
        .addColumn('identity', 'text', (c) => c.primaryKey())
        .addColumn('vendor', 'text')
        .addColumn('model', 'text')
        .addColumn('serial_number', 'text')
        .addColumn('firmware_version', 'text')
        .addColumn('boot_status', 'text')
        .addColumn('last_boot_at', 'text')
        .addColumn('last_heartbeat_at', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ocpp_id_tags')
        .addColumn('id_tag', 'text', (c) => c.primaryKey())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('parent_id_tag', 'text')
        .addColumn('expiry_date', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ocpp_connectors')
        .addColumn('identity', 'text', (c) => c.notNull())
        .addColumn('connector_id', 'integer', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('error_code', 'text', (c) => c.notNull())
        .addColumn('info', 'text')
        .addColumn('vendor_id', 'text')
        .addColumn('vendor_error_code', 'text')
        .addColumn('status_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('ocpp_connectors_pk', ['identity', 'connector_id'])
        .execute();
      await db.schema
        .createTable('ocpp_transactions')
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('identity', 'text', (c) => c.notNull())
        .addColumn('connector_id', 'integer', (c) => c.notNull())
        .addColumn('id_tag', 'text', (c) => c.notNull())
        .addColumn('start_status', 'text', (c) => c.notNull())
        .addColumn('meter_start', 'integer', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('reservation_id', 'integer')
        .addColumn('meter_stop', 'integer')
        .addColumn('stopped_at', 'text')
        .addColumn('stop_reason', 'text')
        .addColumn('stop_id_tag', 'text')
        .execute();
      await db.schema
        .createIndex('ocpp_transactions_identity')
        .on('ocpp_transactions')
        .columns(['identity', 'id'])
        .execute();
      await db.schema
        .createTable('ocpp_meter_values')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('identity', 'text', (c) => c.notNull())
        .addColumn('connector_id', 'integer', (c) => c.notNull())
        .addColumn('transaction_id', 'integer')
        .addColumn('sampled_at', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('measurand', 'text')
        .addColumn('unit', 'text')
        .addColumn('phase', 'text')
        .addColumn('context', 'text')
        .addColumn('location', 'text')
        .addColumn('format', 'text')
        .execute();
      await db.schema
        .createIndex('ocpp_meter_values_transaction')
        .on('ocpp_meter_values')
        .columns(['transaction_id', 'id'])
        .execute();
      await db.schema
        .createTable('ocpp_counters')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into ocpp_counters (name, value) values ('transaction', 0)`.execute(db);
    },
  },
  '0003_wampcra': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Stored WAMP-CRA credentials share the credentials table; one active credential per authid.
      await db.schema
        .createIndex('credentials_active_wampcra_authid')
        .on('credentials')
        .column('username')
        .unique()
        .where(sql<boolean>`kind = 'wampcra' and revoked_at is null`)
        .execute();
    },
  },
  '0004_id_tag_case': {
    async up(db: Kysely<unknown>): Promise<void> {
      // OCPP id tags are case-insensitive (CiString20Type): they are looked up by lower(id_tag). Not
      // unique: a store from before may hold two tags that differ only in case, and must still open.
      await db.schema
        .createIndex('ocpp_id_tags_folded')
        .on('ocpp_id_tags')
        .expression(sql`lower(id_tag)`)
        .execute();
    },
  },
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
