import { type Kysely, type Selectable } from 'kysely';
import { BatchInsert } from './batch-insert.js';
import { timestamp } from './ids.js';
import { type OcppStationsTable, type Database } from './schema.js';
import { type StationView } from './ocpp.types.js';

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
    lastHeartbeatAt: lastSeen ?? row.last_heartbeat_at,
    updatedAt: lastSeen !== undefined && lastSeen > row.updated_at ? lastSeen : row.updated_at,
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
  /** Last-seen times not written yet, then the ones being written; reads see both. */
  private lastSeen = new Map<string, string>();
  private writingLastSeen = new Map<string, string>();
  private lastSeenTimer: NodeJS.Timeout | null = null;
  private lastSeenWrite: Promise<void> | null = null;

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

  /** Seen by get() and list() at once; written within LAST_SEEN_WRITE_DELAY_MS. */
  recordHeartbeat(identity: string): void {
    this.lastSeen.set(identity, timestamp());
    this.lastSeenTimer ??= setTimeout(() => {
      this.lastSeenTimer = null;
      // A failed write keeps its times for the next one (see writeLastSeen); nothing to report here.
      this.writeLastSeen().catch(() => undefined);
    }, LAST_SEEN_WRITE_DELAY_MS).unref();
  }

  /** Writes the last-seen times not yet written, and rejects if that write fails. */
  async flush(): Promise<void> {
    if (this.lastSeenTimer !== null) clearTimeout(this.lastSeenTimer);
    this.lastSeenTimer = null;
    await this.writeLastSeen();
  }

  private async writeLastSeen(): Promise<void> {
    while (this.lastSeenWrite !== null) await this.lastSeenWrite.catch(() => undefined);
    if (this.lastSeen.size === 0) return;
    this.writingLastSeen = this.lastSeen;
    this.lastSeen = new Map();
    const rows = [...this.writingLastSeen].map(([identity, at]) => ({
      identity,
      last_heartbeat_at: at,
      updated_at: at,
    }));
    this.lastSeenWrite = this.db.transaction().execute((trx) => this.heartbeatUpserts.run(trx, rows));
    try {
      await this.lastSeenWrite;
    } catch (err) {
      // Kept for the next write, unless a newer beat came meanwhile.
      for (const [identity, at] of this.writingLastSeen) {
        if (!this.lastSeen.has(identity)) this.lastSeen.set(identity, at);
      }
      throw err;
    } finally {
      this.writingLastSeen = new Map();
      this.lastSeenWrite = null;
    }
  }

  private seen(identity: string): string | undefined {
    return this.lastSeen.get(identity) ?? this.writingLastSeen.get(identity);
  }

  async get(identity: string): Promise<StationView | null> {
    const row = await this.db
      .selectFrom('ocpp_stations')
      .selectAll()
      .where('identity', '=', identity)
      .executeTakeFirst();
    const seen = this.seen(identity);
    if (row !== undefined) return view(row, seen);
    return seen === undefined ? null : view(unbootedRow(identity, seen), undefined);
  }

  async list(): Promise<StationView[]> {
    const rows = await this.db.selectFrom('ocpp_stations').selectAll().orderBy('identity').execute();
    const stored = new Set(rows.map((row) => row.identity));
    const unwritten = [...this.lastSeen, ...this.writingLastSeen]
      .filter(([identity]) => !stored.has(identity))
      .map(([identity, at]) => unbootedRow(identity, at));
    const all = [...rows, ...unwritten].map((row) => view(row, this.seen(row.identity)));
    // By identity, in code-unit order, the unwritten ones among them.
    return all.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }
}
