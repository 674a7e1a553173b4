/** One statement of a write: its SQL and the values of its parameters. */
export interface WriteStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

/** Main thread to writer thread: statements to run in one transaction. */
export interface WriterRequest {
  readonly id: number;
  readonly statements: readonly WriteStatement[];
}

/** Writer thread to main thread: the transaction committed (error null), or rolled back. */
export interface WriterReply {
  readonly id: number;
  readonly error: string | null;
}
