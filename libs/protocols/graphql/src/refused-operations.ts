/** Refused operations (a parse or validation error) one connection may send in one window... */
export const MAX_REFUSED_OPERATIONS = 20;
/** ...of this many milliseconds; one more closes it with 4429. */
export const REFUSED_WINDOW_MS = 10_000;

export const TOO_MANY_REFUSED = `Too many refused operations: more than ${MAX_REFUSED_OPERATIONS} in ${REFUSED_WINDOW_MS / 1000} s`;

/**
 * Counts one connection's refused operations. Each costs a parse and the cheap limits at least; a
 * client that keeps sending documents the broker refuses is abusing the shared event loop, and is
 * closed rather than served on.
 */
export class RefusedOperations {
  private count = 0;
  private windowStart = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** Counts one refusal; true when the connection has now sent too many. */
  add(): boolean {
    const now = this.now();
    if (now - this.windowStart > REFUSED_WINDOW_MS) {
      this.windowStart = now;
      this.count = 0;
    }
    return ++this.count > MAX_REFUSED_OPERATIONS;
  }
}
