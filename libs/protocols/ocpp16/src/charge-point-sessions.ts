import { Injectable } from '@nestjs/common';
import { type Connection } from '#broker/gateway';
import { type OcppSession } from './ocpp-session.js';

export interface ChargePointConnection {
  readonly identity: string;
  readonly endpoint: string;
  readonly connection: Connection;
  readonly session: OcppSession;
  readonly connectedAt: Date;
}

/** The connected charge points of this node, by identity: one connection each. */
@Injectable()
export class ChargePointSessions {
  private readonly byIdentity = new Map<string, ChargePointConnection>();

  /** Registers the new connection and returns the one it replaces, which the caller closes. */
  register(entry: ChargePointConnection): ChargePointConnection | null {
    const previous = this.byIdentity.get(entry.identity) ?? null;
    this.byIdentity.set(entry.identity, entry);
    return previous;
  }

  /** Only the registered connection unregisters: a replaced one closing later must not remove its successor. */
  remove(entry: ChargePointConnection): boolean {
    if (this.byIdentity.get(entry.identity) !== entry) return false;
    this.byIdentity.delete(entry.identity);
    return true;
  }

  get(identity: string): ChargePointConnection | undefined {
    return this.byIdentity.get(identity);
  }

  get size(): number {
    return this.byIdentity.size;
  }
}
