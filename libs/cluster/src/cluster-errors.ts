/** A request to another node got no answer in time (the node is busy, partitioned or just died). */
export class NodeTimeoutError extends Error {
  override readonly name = 'NodeTimeoutError';
}

/** Nobody serves the subject: the node is gone, or (for a keyed request) nobody holds the key. */
export class NoHolderError extends Error {
  override readonly name = 'NoHolderError';
}

/** The serving node answered with an error; `code` is the error's name there. */
export class RemoteError extends Error {
  override readonly name = 'RemoteError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
