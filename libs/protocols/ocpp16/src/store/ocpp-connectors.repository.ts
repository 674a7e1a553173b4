import { type Kysely, type Selectable } from 'kysely';
import { timestamp } from '#broker/store';
import { type ConnectorView } from './ocpp.types.js';
import { type OcppConnectorsTable, type OcppDatabase } from './ocpp.schema.js';

function view(row: Selectable<OcppConnectorsTable>): ConnectorView {
  return {
    identity: row.identity,
    connectorId: row.connector_id,
    status: row.status,
    errorCode: row.error_code,
    info: row.info,
    vendorId: row.vendor_id,
    vendorErrorCode: row.vendor_error_code,
    statusAt: row.status_at,
    updatedAt: row.updated_at,
  };
}

export interface ConnectorStatusInput {
  readonly connectorId: number;
  readonly status: string;
  readonly errorCode: string;
  readonly info?: string | undefined;
  readonly vendorId?: string | undefined;
  readonly vendorErrorCode?: string | undefined;
  /** The charge point's timestamp, when it sent one. */
  readonly timestamp?: string | undefined;
}

/** The latest status of each connector, one row per charge point and connector. */
export class OcppConnectorsRepository {
  constructor(private readonly db: Kysely<OcppDatabase>) {}

  async record(identity: string, input: ConnectorStatusInput): Promise<ConnectorView> {
    const now = timestamp();
    const fields = {
      status: input.status,
      error_code: input.errorCode,
      info: input.info ?? null,
      vendor_id: input.vendorId ?? null,
      vendor_error_code: input.vendorErrorCode ?? null,
      status_at: input.timestamp ?? now,
      updated_at: now,
    };
    const row = { identity, connector_id: input.connectorId, ...fields };
    await this.db
      .insertInto('ocpp_connectors')
      .values(row)
      .onConflict((oc) => oc.columns(['identity', 'connector_id']).doUpdateSet(fields))
      .execute();
    return view(row);
  }

  async list(identity: string): Promise<ConnectorView[]> {
    const rows = await this.db
      .selectFrom('ocpp_connectors')
      .selectAll()
      .where('identity', '=', identity)
      .orderBy('connector_id')
      .execute();
    return rows.map(view);
  }
}
