import { type Clock } from '#broker/kit';

/** Addresses whose debt is kept after their connections closed; past it the one left longest ago goes. */
const MAX_ADDRESSES = 10_000;

interface Debt {
  /** Milliseconds of loop time owed as of `since`. */
  readonly debt: number;
  readonly since: number;
  /** Paid back at this many milliseconds per millisecond. */
  readonly share: number;
}

/** A connection's InputBudget, as far as its address's debt goes. */
export interface Ledger {
  owed(): number;
}

/**
 * What each client address owes the event loop: the InputBudget debts of its open connections, and
 * what connections that closed before paying theirs back left owing. A new connection from that
 * address starts owing all of it. Without this, a client whose costly messages got it paused (or
 * closed, as GraphQL's 4429) opened another connection, beside it or after it, with a fresh budget,
 * and spent another burst each time. A debt left behind is paid back over time at the share it was
 * run up at, and forgotten once paid. The open connections of one address are bounded by
 * `maxConnectionsPerAddress`.
 */
export class AddressDebts {
  private readonly left = new Map<string, Debt>();
  private readonly open = new Map<string, Set<Ledger>>();

  constructor(private readonly clock: Clock) {}

  /** What `address` owes now. */
  owed(address: string): number {
    let total = this.leftBehind(address);
    for (const ledger of this.open.get(address) ?? []) total += ledger.owed();
    return total;
  }

  /** A connection of `address` started its budget. */
  opened(address: string, ledger: Ledger): void {
    let ledgers = this.open.get(address);
    if (ledgers === undefined) this.open.set(address, (ledgers = new Set()));
    ledgers.add(ledger);
  }

  /** A connection of `address` closed; what its budget still owes, run up at `share`, stays owed. */
  closed(address: string, ledger: Ledger, share: number): void {
    const ledgers = this.open.get(address);
    ledgers?.delete(ledger);
    if (ledgers?.size === 0) this.open.delete(address);
    const total = Math.max(ledger.owed(), this.leftBehind(address));
    if (!(total > 0)) return;
    this.left.delete(address);
    this.left.set(address, { debt: total, since: this.clock.monotonic(), share });
    if (this.left.size > MAX_ADDRESSES) this.left.delete(this.left.keys().next().value as string);
  }

  private leftBehind(address: string): number {
    const entry = this.left.get(address);
    if (entry === undefined) return 0;
    const rest = entry.debt - (this.clock.monotonic() - entry.since) * entry.share;
    if (rest > 0) return rest;
    this.left.delete(address);
    return 0;
  }
}
