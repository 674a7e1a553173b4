import { type Database } from '#broker/store';

/** What the OCPP central system last heard from a charge point (known to the store or not). */
export interface OcppStationsTable {
  identity: string;
  vendor: string | null;
  model: string | null;
  serial_number: string | null;
  firmware_version: string | null;
  /** The last BootNotification answer: Accepted, Pending or Rejected. */
  boot_status: string | null;
  last_boot_at: string | null;
  last_heartbeat_at: string | null;
  updated_at: string;
}

/** OCPP id tags (RFID cards, app tokens) the central system authorizes. */
export interface OcppIdTagsTable {
  id_tag: string;
  /** Accepted, Blocked, Expired or Invalid. */
  status: string;
  parent_id_tag: string | null;
  expiry_date: string | null;
  created_at: string;
  updated_at: string;
}

/** The latest StatusNotification per connector (connector 0 is the charge point itself). */
export interface OcppConnectorsTable {
  identity: string;
  connector_id: number;
  status: string;
  error_code: string;
  info: string | null;
  vendor_id: string | null;
  vendor_error_code: string | null;
  /** The charge point's own timestamp when it sent one, else when we received it. */
  status_at: string;
  updated_at: string;
}

export interface OcppTransactionsTable {
  id: number;
  identity: string;
  connector_id: number;
  id_tag: string;
  /** The idTagInfo status answered at the start. */
  start_status: string;
  meter_start: number;
  started_at: string;
  reservation_id: number | null;
  meter_stop: number | null;
  stopped_at: string | null;
  stop_reason: string | null;
  stop_id_tag: string | null;
}

/** One sampledValue of a MeterValues request (or of StopTransaction's transactionData). */
export interface OcppMeterValuesTable {
  id: string;
  identity: string;
  connector_id: number;
  transaction_id: number | null;
  sampled_at: string;
  value: string;
  measurand: string | null;
  unit: string | null;
  phase: string | null;
  context: string | null;
  location: string | null;
  format: string | null;
}

/** The charge points the central system knows; the Basic-auth password as scrypt (the store's secrets). */
export interface ChargePointsTable {
  identity: string;
  password_hash: string | null;
  allowed: number;
  created_at: string;
  updated_at: string;
}

/** Named counters (OCPP transaction ids), incremented atomically on both backends. */
export interface OcppCountersTable {
  name: string;
  value: number;
}

/**
 * The OCPP central system's tables, beside the store's own (`Database`). The store's migrations
 * 0002_ocpp and 0004_id_tag_case create them (see migrations.ts there for why they stay in its list).
 * A type, not an interface: Kysely's withTables() wants the index signature only a type alias has.
 */
export type OcppTables = {
  ocpp_stations: OcppStationsTable;
  ocpp_id_tags: OcppIdTagsTable;
  ocpp_connectors: OcppConnectorsTable;
  ocpp_transactions: OcppTransactionsTable;
  ocpp_meter_values: OcppMeterValuesTable;
  ocpp_counters: OcppCountersTable;
  charge_points: ChargePointsTable;
};

/** What the OCPP repositories query: the store's tables (audit, for id tag changes) and OCPP's own. */
export type OcppDatabase = Database & OcppTables;
