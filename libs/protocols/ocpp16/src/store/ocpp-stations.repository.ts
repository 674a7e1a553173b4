import { sql, type Kysely, type Selectable } from 'kysely';
import { BatchInsert, timestamp, WriteBehindMap } from '#broker/store';
import { type OcppDatabase, type OcppStationsTable } from './ocpp.schema.js';
import { type StationView } from './ocpp.types.js';

/** The later of two ISO times, either possibly missing. */
function later<T extends string | null>(a: T, b: string | undefined): T | string {
  return b !== undefined && (a === null || b > a) ? b : a;
}

/** A row as stored, with a last-seen time not written yet (the later, then, of the two). */
function view(row: Selectable<OcppStationsTable>, lastSeen: string | undefined): StationView {
  return {
    identity: row.identity,
    vendor: row.vendor,
    model: row.model,
    serialNumber: row.serial_number,
    firmwareVersion: row.firmware_version,
    bootStatus: row.boot_status,
    lastBootAt: row.last_boot_at,
    lastHeartbeatAt: later(row.last_heartbeat_at, lastSeen),
    updatedAt: later(row.updated_at, lastSeen),
  };
}

export interface BootInput {
  readonly vendor: string;
  readonly model: string;
  readonly serialNumber?: string | undefined;
  readonly firmwareVersion?: string | undefined;
}

/**
 * Last-seen times are written behind, at most this late. A Heartbeat's answer does not depend on the
 * database, and each one costs a Map entry instead of a durable commit: the beats of a second share
 * one upsert, the latest per charge point. A crash loses at most that second of last-seen times (a
 * charge point's liveness, not its data); closing the store writes them first.
 */
const LAST_SEEN_WRITE_DELAY_MS = 1000;

/** The row a Heartbeat makes for a charge point that never booted, before it is written. */
function unbootedRow(identity: string, at: string): Selectable<OcppStationsTable> {
  return {
    identity,
    vendor: null,
    model: null,
    serial_number: null,
    firmware_version: null,
    boot_status: null,
    last_boot_at: null,
    last_heartbeat_at: at,
    updated_at: at,
  };
}

interface HeartbeatRow {
  readonly identity: string;
  readonly last_heartbeat_at: string;
  readonly updated_at: string;
}

/** Charge points as the central system saw them boot and beat; unknown charge points get a row too. */
export class OcppStationsRepository {
  /**
   * A charge point's last beat; one that never booted gets its row here. A time written behind never
   * replaces a later one (a boot's `updated_at` since, another node's beat on a shared database). One
   * per repository: the SQL is the dialect's.
   */
  private readonly heartbeatUpserts = new BatchInsert<OcppDatabase, HeartbeatRow>(
    (db, rows) =>
      db
        .insertInto('ocpp_stations')
        .values(rows.map((r) => ({ ...r })))
        .onConflict((oc) =>
          oc.column('identity').doUpdateSet((eb) => ({
            last_heartbeat_at: eb
              .case()
              .when(
                'excluded.last_heartbeat_at',
                '>',
                eb.fn.coalesce('ocpp_stations.last_heartbeat_at', sql.lit('')),
              )
              .then(eb.ref('excluded.last_heartbeat_at'))
              .else(eb.ref('ocpp_stations.last_heartbeat_at'))
              .end(),
            updated_at: eb
              .case()
              .when('excluded.updated_at', '>', eb.ref('ocpp_stations.updated_at'))
              .then(eb.ref('excluded.updated_at'))
              .else(eb.ref('ocpp_stations.updated_at'))
              .end(),
          })),
        ),
    ['identity', 'last_heartbeat_at', 'updated_at'],
    (row) => [row.identity, row.last_heartbeat_at, row.updated_at],
  );
  private readonly lastSeen = new WriteBehindMap<string>(
    (beats) => this.writeHeartbeats(beats),
    LAST_SEEN_WRITE_DELAY_MS,
    (err) => this.onWriteError(err as Error),
  );

  /** Told when a write of last-seen times fails (it is retried); the OCPP module logs it. */
  onWriteError: (err: Error) => void = (err) =>
    process.emitWarning(`writing OCPP last-seen times failed, retried in a second: ${err.message}`);

  constructor(private readonly db: Kysely<OcppDatabase>) {}

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

  /** Seen by get() and list() at once; written within LAST_SEEN_WRITE_DELAY_MS. */
  recordHeartbeat(identity: string): void {
    this.lastSeen.set(identity, timestamp());
  }

  /** Writes the last-seen times not yet written, and rejects if that write fails. */
  flush(): Promise<void> {
    return this.lastSeen.flush();
  }

  /** Writes the last-seen times not yet written and takes no more (the store is closing). */
  close(): Promise<void> {
    return this.lastSeen.close();
  }

  private async writeHeartbeats(beats: ReadonlyMap<string, string>): Promise<void> {
    const rows = [...beats].map(([identity, at]) => ({ identity, last_heartbeat_at: at, updated_at: at }));
    await this.db.transaction().execute((trx) => this.heartbeatUpserts.run(trx, rows));
  }

  async get(identity: string): Promise<StationView | null> {
    // Taken before the query: a write that commits meanwhile is then in the row, or still here.
    const seen = this.lastSeen.get(identity);
    const row = await this.db
      .selectFrom('ocpp_stations')
      .selectAll()
      .where('identity', '=', identity)
      .executeTakeFirst();
    if (row !== undefined) return view(row, seen);
    return seen === undefined ? null : view(unbootedRow(identity, seen), undefined);
  }

  async list(): Promise<StationView[]> {
    // Taken before the query: a write that commits meanwhile is then in the rows, or still here.
    const unwritten = this.lastSeen.unwritten();
    const rows = await this.db.selectFrom('ocpp_stations').selectAll().execute();
    const stored = new Set(rows.map((row) => row.identity));
    const unbooted = [...unwritten]
      .filter(([identity]) => !stored.has(identity))
      .map(([identity, at]) => unbootedRow(identity, at));
    const all = [...rows, ...unbooted].map((row) => view(row, unwritten.get(row.identity)));
    // By identity, in code-unit order (the same on both backends), the unwritten ones among them.
    return all.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }
}
