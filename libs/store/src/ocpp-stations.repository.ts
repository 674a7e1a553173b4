import { type Kysely, type Selectable } from 'kysely';
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

/** Charge points as the central system saw them boot and beat; unknown charge points get a row too. */
export class OcppStationsRepository {
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

  async recordHeartbeat(identity: string): Promise<void> {
    const now = timestamp();
    await this.db
      .insertInto('ocpp_stations')
      .values({ identity, last_heartbeat_at: now, updated_at: now })
      .onConflict((oc) => oc.column('identity').doUpdateSet({ last_heartbeat_at: now, updated_at: now }))
      .execute();
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
