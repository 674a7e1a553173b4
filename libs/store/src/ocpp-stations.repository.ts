import { type Kysely, type Selectable } from 'kysely';
import { BatchInsert } from './batch-insert.js';
import { GroupCommit } from './group-commit.js';
import { timestamp } from './ids.js';
import { type OcppStationsTable, type Database } from './schema.js';
import { type StationView } from './ocpp.types.js';

function view(row: Selectable<OcppStationsTable>): StationView {
  return {
    identity: row.identity,
    vendor: row.vendor,
    model: row.model,
    serialNumber: row.serial_number,
    firmwareVersion: row.firmware_version,
    bootStatus: row.boot_status,
    lastBootAt: row.last_boot_at,
    lastHeartbeatAt: row.last_heartbeat_at,
    updatedAt: row.updated_at,
  };
}

export interface BootInput {
  readonly vendor: string;
  readonly model: string;
  readonly serialNumber?: string | undefined;
  readonly firmwareVersion?: string | undefined;
}

interface Heartbeat {
  readonly identity: string;
  readonly at: string;
}

interface HeartbeatRow {
  readonly identity: string;
  readonly last_heartbeat_at: string;
  readonly updated_at: string;
}

/** Charge points as the central system saw them boot and beat; unknown charge points get a row too. */
export class OcppStationsRepository {
  /** Heartbeats of one tick share one upsert (one statement: 3 parameters a row, far under both limits). */
  /** A charge point's last beat; one that never booted gets its row here. One per repository: the SQL is the dialect's. */
  private readonly heartbeatUpserts = new BatchInsert<HeartbeatRow>(
    (db, rows) =>
      db
        .insertInto('ocpp_stations')
        .values(rows.map((r) => ({ ...r })))
        .onConflict((oc) =>
          oc.column('identity').doUpdateSet((eb) => ({
            last_heartbeat_at: eb.ref('excluded.last_heartbeat_at'),
            updated_at: eb.ref('excluded.updated_at'),
          })),
        ),
    (row) => [row.identity, row.last_heartbeat_at, row.updated_at],
  );
  private readonly heartbeats = new GroupCommit<Heartbeat>((beats) => this.writeHeartbeats(beats), 500);

  constructor(private readonly db: Kysely<Database>) {}

  async recordBoot(identity: string, boot: BootInput, status: string): Promise<StationView> {
    const now = timestamp();
    const row = {
      identity,
      vendor: boot.vendor,
      model: boot.model,
      serial_number: boot.serialNumber ?? null,
      firmware_version: boot.firmwareVersion ?? null,
      boot_status: status,
      last_boot_at: now,
      updated_at: now,
    };
    await this.db
      .insertInto('ocpp_stations')
      .values({ ...row, last_heartbeat_at: null })
      .onConflict((oc) => oc.column('identity').doUpdateSet(row))
      .execute();
    return this.get(identity) as Promise<StationView>;
  }

  /** Resolves once the heartbeat is stored (group-committed with the others of its tick). */
  recordHeartbeat(identity: string): Promise<void> {
    return this.heartbeats.add({ identity, at: timestamp() });
  }

  /** Waits for heartbeats not yet written. */
  flush(): Promise<void> {
    return this.heartbeats.drain();
  }

  private async writeHeartbeats(beats: readonly Heartbeat[]): Promise<void> {
    // One row per identity (the latest beat): an upsert may not touch a row twice in one statement.
    const latest = new Map<string, string>();
    for (const beat of beats) latest.set(beat.identity, beat.at);
    const rows = [...latest].map(([identity, at]) => ({ identity, last_heartbeat_at: at, updated_at: at }));
    await this.db.transaction().execute((trx) => this.heartbeatUpserts.run(trx, rows));
  }

  async get(identity: string): Promise<StationView | null> {
    const row = await this.db
      .selectFrom('ocpp_stations')
      .selectAll()
      .where('identity', '=', identity)
      .executeTakeFirst();
    return row === undefined ? null : view(row);
  }

  async list(): Promise<StationView[]> {
    return (await this.db.selectFrom('ocpp_stations').selectAll().orderBy('identity').execute()).map(view);
  }
}
