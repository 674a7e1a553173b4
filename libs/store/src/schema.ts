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
  /** 'token', 'password', or a kind a module adds (CredentialsRepository.createOfKind). */
  kind: string;
  name: string;
  /**
   * Password credentials: the username; a module's kind: its own name for the client. Unique per kind
   * among those not revoked.
   */
  username: string | null;
  /** Tokens: HMAC-SHA256 hex of the token; passwords: scrypt record (secrets.ts); a module's kind: its own. */
  secret_hash: string;
  /** JSON array of scope strings. */
  scopes: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
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

export interface Database {
  origins: OriginsTable;
  credentials: CredentialsTable;
  audit: AuditTable;
  settings: SettingsTable;
}
