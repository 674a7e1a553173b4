import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type Kysely, type Migration } from 'kysely';
import { BrokerStore } from 'ws-protocol-broker';

// A type, not an interface: Kysely's table maps take an index signature.
type ShoutTables = {
  shout_counts: { user: string; shouts: number; last_at: string };
};

/** The module's own table, made by its own migrations (recorded apart from the broker's, as `shout`). */
const MIGRATIONS: Record<string, Migration> = {
  '0001_counts': {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('shout_counts')
        .addColumn('user', 'text', (c) => c.primaryKey())
        .addColumn('shouts', 'integer', (c) => c.notNull())
        .addColumn('last_at', 'text', (c) => c.notNull())
        .execute();
    },
  },
};

export interface Shouter {
  readonly user: string;
  readonly shouts: number;
  readonly lastAt: string;
}

/** How many times each user shouted, in the broker's store (SQLite or PostgreSQL, whichever it runs on). */
@Injectable()
export class ShoutCounts implements OnModuleInit {
  constructor(private readonly store: BrokerStore) {}

  private readonly db = this.store.db.withTables<ShoutTables>();

  async onModuleInit(): Promise<void> {
    await this.store.migrate('shout', MIGRATIONS);
  }

  async add(user: string): Promise<void> {
    const now = new Date().toISOString();
    await this.db
      .insertInto('shout_counts')
      .values({ user, shouts: 1, last_at: now })
      .onConflict((oc) =>
        oc.column('user').doUpdateSet((eb) => ({ shouts: eb('shout_counts.shouts', '+', 1), last_at: now })),
      )
      .execute();
  }

  /** The loudest `limit` users, loudest first. */
  async loudest(limit: number): Promise<Shouter[]> {
    const rows = await this.db
      .selectFrom('shout_counts')
      .selectAll()
      .orderBy('shouts', 'desc')
      .orderBy('user')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ user: row.user, shouts: row.shouts, lastAt: row.last_at }));
  }
}
