/**
 * Table shapes as Kysely sees them. Column types are the portable subset both SQLite and PostgreSQL
 * store the same way: text (ISO-8601 UTC timestamps sort as text), integer (0/1 flags), so one query
 * path above the driver serves both backends.
 */
export interface OriginsTable {
  id: string;
  /** '' for a global entry, else the endpoint path as configured (for example '/ocpp/:chargePointId'). */
  endpoint: string;
  origin: string;
  created_at: string;
  created_by: string;
}

export interface CredentialsTable {
  id: string;
  kind: 'token' | 'password' | 'wampcra';
  name: string;
  /** Password credentials: the username; wampcra: the authid. Unique per kind among those not revoked. */
  username: string | null;
  /** Tokens: HMAC-SHA256 hex of the token; passwords: scrypt record; wampcra: PBKDF2 record (secrets.ts). */
  secret_hash: string;
  /** JSON array of scope strings. */
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface ChargePointsTable {
  identity: string;
  password_hash: string | null;
  allowed: number;
  created_at: string;
  updated_at: string;
}

export interface AuditTable {
  id: string;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: string | null;
  after: string | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

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

/** Named counters (OCPP transaction ids), incremented atomically on both backends. */
export interface OcppCountersTable {
  name: string;
  value: number;
}

export interface Database {
  origins: OriginsTable;
  credentials: CredentialsTable;
  charge_points: ChargePointsTable;
  audit: AuditTable;
  settings: SettingsTable;
  ocpp_stations: OcppStationsTable;
  ocpp_id_tags: OcppIdTagsTable;
  ocpp_connectors: OcppConnectorsTable;
  ocpp_transactions: OcppTransactionsTable;
  ocpp_meter_values: OcppMeterValuesTable;
  ocpp_counters: OcppCountersTable;
}
