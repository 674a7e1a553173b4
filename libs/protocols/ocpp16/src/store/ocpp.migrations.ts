import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The OCPP central system's tables, made by the module itself (BrokerStore.migrate, recorded as
 * `ocpp16`), in name order. Never edit one that has shipped: add the next. Each creates only what is
 * missing: a database from before the module had its own list holds these tables already (made by the
 * broker's 0002_ocpp and 0004_id_tag_case), and is taken as it is.
 */
export const OCPP_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_tables': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('ocpp_stations')
        .ifNotExists()
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
        .ifNotExists()
        .addColumn('id_tag', 'text', (c) => c.primaryKey())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('parent_id_tag', 'text')
        .addColumn('expiry_date', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ocpp_connectors')
        .ifNotExists()
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
        .ifNotExists()
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
        .ifNotExists()
        .on('ocpp_transactions')
        .columns(['identity', 'id'])
        .execute();
      await db.schema
        .createTable('ocpp_meter_values')
        .ifNotExists()
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
        .ifNotExists()
        .on('ocpp_meter_values')
        .columns(['transaction_id', 'id'])
        .execute();
      await db.schema
        .createTable('ocpp_counters')
        .ifNotExists()
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'integer', (c) => c.notNull())
        .execute();
      await sql`insert into ocpp_counters (name, value) values ('transaction', 0) on conflict do nothing`.execute(
        db,
      );
    },
  },
  '0002_id_tag_case': {
    async up(db: Kysely<unknown>): Promise<void> {
      // OCPP id tags are case-insensitive (CiString20Type): they are looked up by lower(id_tag). Not
      // unique: a store from before may hold two tags that differ only in case, and must still open.
      await db.schema
        .createIndex('ocpp_id_tags_folded')
        .ifNotExists()
        .on('ocpp_id_tags')
        .expression(sql`lower(id_tag)`)
        .execute();
    },
  },
  '0003_charge_points': {
    async up(db: Kysely<unknown>): Promise<void> {
      // The charge points the central system knows, with their Basic-auth passwords. The broker's own
      // 0001_init made this table before the module owned it; such a database keeps the one it has.
      await db.schema
        .createTable('charge_points')
        .ifNotExists()
        .addColumn('identity', 'text', (c) => c.primaryKey())
        .addColumn('password_hash', 'text')
        .addColumn('allowed', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
};
