import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

/**
 * PostgreSQL whose introspection (only Kysely's migrator uses it, to find its own tables) sees the
 * connection's own schema alone. Kysely's introspector reads every schema of the database and calls
 * functions that look a schema up by its name (has_schema_privilege, pg_get_serial_sequence): another
 * broker or test dropping its schema meanwhile failed the migration with `schema "<theirs>" does not
 * exist`. These queries touch only the catalog rows, by OID, so nothing a neighbour does can fail them.
 */
export class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}

class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`select nspname as name from pg_catalog.pg_namespace`.execute(
      this.db,
    );
    return rows;
  }

  /** Tables and views of the current schema, without their columns (the migrator needs the names). */
  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; kind: string }>`
      select c.relname as name, n.nspname as schema, c.relkind as kind
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm')`.execute(this.db);
    return rows.map(({ name, schema, kind }) => ({
      name,
      schema,
      isView: kind === 'v' || kind === 'm',
      columns: [],
    }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}
