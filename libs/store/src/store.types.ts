export interface OriginEntry {
  readonly id: string;
  /** null: applies to every endpoint. */
  readonly endpoint: string | null;
  readonly origin: string;
  readonly createdAt: string;
  readonly createdBy: string;
}

export interface CredentialView {
  readonly id: string;
  /** 'token', 'password', or a kind a module adds. */
  readonly kind: string;
  readonly name: string;
  readonly username: string | null;
  readonly scopes: readonly string[];
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly revokedAt: string | null;
  readonly status: 'active' | 'expired' | 'revoked';
}

export interface AuditRecord {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly target: string;
  readonly before: unknown;
  readonly after: unknown;
}

/** Who makes a change: written to the audit record. */
export type Actor = string;
