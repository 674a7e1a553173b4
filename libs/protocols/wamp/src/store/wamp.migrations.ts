import { sql, type Kysely, type Migration } from 'kysely';

/**
 * The WAMP module's own migrations (BrokerStore.migrate, recorded as `wamp`), in name order. Never edit
 * one that has shipped: add the next. A database from before the module had its own list holds the
 * index already (made by the broker's 0003_wampcra), and is taken as it is.
 */
export const WAMP_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_cra_authid': {
    async up(db: Kysely<unknown>): Promise<void> {
      // Stored WAMP-CRA credentials share the broker's credentials table; one active credential per authid.
      await db.schema
        .createIndex('credentials_active_wampcra_authid')
        .ifNotExists()
        .on('credentials')
        .column('username')
        .unique()
        .where(sql<boolean>`kind = 'wampcra' and revoked_at is null`)
        .execute();
    },
  },
};
