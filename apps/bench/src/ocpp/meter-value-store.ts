import Database from 'better-sqlite3';

interface SampledValue {
  readonly value: string;
  readonly context?: string;
  readonly format?: string;
  readonly measurand?: string;
  readonly phase?: string;
  readonly location?: string;
  readonly unit?: string;
}

/** The parts of a MeterValues request that are stored (ocpp-rpc has validated it against the schema). */
export interface MeterValuesParams {
  readonly connectorId: number;
  readonly transactionId?: number;
  readonly meterValue: readonly {
    readonly timestamp: string;
    readonly sampledValue: readonly SampledValue[];
  }[];
}

type Row = readonly [string, string, number, number | null, string, string, ...(string | null)[]];

interface Waiting {
  readonly rows: readonly Row[];
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The work the broker does for a MeterValues and the plain reference does not, for the OCPP
 * benchmark's stored reference: every sampled value committed durably (WAL, `synchronous = FULL`)
 * before the answer, the calls of one turn of the event loop in one transaction, in a table of the
 * broker's shape (same columns, a time-ordered text key, the same index). Written as a team building
 * on ocpp-rpc would: better-sqlite3 directly, a prepared single-row insert in a loop inside
 * `db.transaction`.
 */
export class MeterValueStore {
  private readonly db: Database.Database;
  private readonly insertAll: (rows: readonly Row[]) => void;
  private waiting: Waiting[] = [];
  private lastMs = 0;
  private sequence = 0;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS meter_values (
      id TEXT PRIMARY KEY, identity TEXT NOT NULL, connector_id INTEGER NOT NULL, transaction_id INTEGER,
      sampled_at TEXT NOT NULL, value TEXT NOT NULL, measurand TEXT, unit TEXT, phase TEXT, context TEXT,
      location TEXT, format TEXT);
      CREATE INDEX IF NOT EXISTS meter_values_transaction ON meter_values (transaction_id, id);`);
    const insert = this.db.prepare('INSERT INTO meter_values VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.insertAll = this.db.transaction((rows: readonly Row[]) => {
      for (const row of rows) insert.run(row);
    });
  }

  /** Resolves once the request's sampled values are committed. */
  add(identity: string, params: MeterValuesParams): Promise<void> {
    const rows: Row[] = [];
    for (const mv of params.meterValue) {
      for (const sv of mv.sampledValue) {
        rows.push([
          this.newId(),
          identity,
          params.connectorId,
          params.transactionId ?? null,
          mv.timestamp,
          sv.value,
          sv.measurand ?? null,
          sv.unit ?? null,
          sv.phase ?? null,
          sv.context ?? null,
          sv.location ?? null,
          sv.format ?? null,
        ]);
      }
    }
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => this.commit());
      this.waiting.push({ rows, resolve, reject });
    });
  }

  private commit(): void {
    const batch = this.waiting;
    this.waiting = [];
    try {
      this.insertAll(batch.flatMap((w) => w.rows));
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    for (const w of batch) w.resolve();
  }

  /** Time-ordered, like the broker's ids, so rows append to the key's index. */
  private newId(): string {
    const ms = Math.max(Date.now(), this.lastMs);
    this.sequence = ms === this.lastMs ? this.sequence + 1 : 0;
    this.lastMs = ms;
    return ms.toString(36).padStart(9, '0') + this.sequence.toString(36).padStart(6, '0');
  }
}
