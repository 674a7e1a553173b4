import { type Clock, type InputBudgetLimits } from '#broker/kit';

/** What one request may be charged at most: a request waiting on the store is not all work. */
const MAX_CHARGE_MS = 50;

interface Ledger {
  /** Milliseconds of request time not yet paid back, as of `since`. */
  debt: number;
  since: number;
}

/**
 * The plain HTTP requests of one client address held to a share of the event loop
 * (`http.inputBudget`), as an endpoint's inputBudget holds a WebSocket's messages. Each request is
 * charged the time from its start to its response, at most MAX_CHARGE_MS; the debt is paid back at
 * `share` milliseconds per millisecond, and past `burstMs` of it the address's next request starts
 * only once the debt is back under the burst. One address's pipelined or looping requests, on one
 * connection or many, then keep at most its share of the loop; a trusted proxy's clients are paced
 * each by their own address. Ledgers paid off are forgotten.
 */
export class RequestPace {
  private readonly ledgers = new Map<string, Ledger>();
  /** The map's size at which paid-off ledgers are swept out; doubled when a sweep frees too little. */
  private sweepAt = 1024;

  constructor(
    private readonly limits: InputBudgetLimits | false,
    private readonly clock: Clock,
  ) {}

  /** Whether requests are paced at all (`http.inputBudget` set): when not, nobody need be asked. */
  get enabled(): boolean {
    return this.limits !== false;
  }

  /** Milliseconds the address's next request waits before it starts (0: at once). */
  wait(address: string): number {
    const limits = this.limits;
    const ledger = this.ledgers.get(address);
    if (limits === false || ledger === undefined) return 0;
    const owed = this.owed(ledger, this.clock.monotonic());
    return owed > limits.burstMs ? (owed - limits.burstMs) / limits.share : 0;
  }

  /** Adds a request's time to the address's debt. */
  charge(address: string, ms: number): void {
    if (this.limits === false) return;
    const now = this.clock.monotonic();
    let ledger = this.ledgers.get(address);
    if (ledger === undefined) {
      if (this.ledgers.size >= this.sweepAt) this.sweep(now);
      ledger = { debt: 0, since: now };
      this.ledgers.set(address, ledger);
    }
    ledger.debt = this.owed(ledger, now) + Math.min(ms, MAX_CHARGE_MS);
    ledger.since = now;
  }

  private owed(ledger: Ledger, now: number): number {
    const share = this.limits === false ? 1 : this.limits.share;
    return Math.max(0, ledger.debt - (now - ledger.since) * share);
  }

  private sweep(now: number): void {
    for (const [address, ledger] of this.ledgers)
      if (this.owed(ledger, now) === 0) this.ledgers.delete(address);
    this.sweepAt = Math.max(1024, this.ledgers.size * 2);
  }
}
