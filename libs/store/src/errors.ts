/** The thing named does not exist (the admin API answers 404). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
}

/** The write would duplicate an existing entry (the admin API answers 409). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** A write committed, but the fsync that makes it durable failed: it may not survive a power cut. */
export class CommitNotDurableError extends Error {
  override readonly name = 'CommitNotDurableError';
}
