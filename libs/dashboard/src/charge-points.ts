import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { type BusSubscription, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { OcppRepositories } from '#broker/protocols/ocpp16';
import { type ChargePointRow } from './snapshot.types.js';

/** The feed shows this many charge points at most (by identity); the admin API lists them all. */
const MAX_CHARGE_POINTS = 50;
/** Ongoing transactions read per refresh, newest first. */
const MAX_TRANSACTIONS = 200;

/**
 * The charge points as the OCPP module's store knows them (boot, heartbeat, connector status,
 * ongoing transactions), read again only after the OCPP module announced a handled CALL on the bus
 * (`ocpp/<identity>/<Action>`), so a quiet central system costs no query per tick. A broker without
 * the OCPP module has none: its repositories are looked up across modules, not injected.
 */
@Injectable()
export class ChargePointTable {
  private rows: ChargePointRow[] = [];
  private stale = true;
  private subscription: BusSubscription | null = null;

  constructor(
    private readonly modules: ModuleRef,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
  ) {}

  /** Starts noticing changes (while someone watches the feed). */
  watch(): void {
    this.stale = true;
    // It only watches: no receiver of the message (a GraphQL publish does not count it).
    this.subscription ??= this.bus.subscribe('ocpp/+/+', () => {
      this.stale = true;
      return { reached: 0 };
    });
  }

  unwatch(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }

  async read(): Promise<ChargePointRow[]> {
    if (!this.stale) return this.rows;
    const ocpp = this.repositories();
    if (ocpp === null) return [];
    // Cleared before reading: a change that lands during the queries marks the table stale again.
    this.stale = false;
    const stations = (await ocpp.stations.list()).slice(0, MAX_CHARGE_POINTS);
    const ongoing = await ocpp.transactions.list({ ongoing: true, limit: MAX_TRANSACTIONS });
    const rows: ChargePointRow[] = [];
    for (const station of stations) {
      const connectors = await ocpp.connectors.list(station.identity);
      rows.push({
        identity: station.identity,
        vendor: station.vendor,
        model: station.model,
        lastHeartbeatAt: station.lastHeartbeatAt,
        connectors: connectors.map((c) => ({ id: c.connectorId, status: c.status, errorCode: c.errorCode })),
        transactions: ongoing
          .filter((t) => t.identity === station.identity)
          .map((t) => ({ id: t.id, connectorId: t.connectorId, startedAt: t.startedAt })),
      });
    }
    this.rows = rows;
    return rows;
  }

  private repositories(): OcppRepositories | null {
    try {
      return this.modules.get(OcppRepositories, { strict: false });
    } catch {
      return null;
    }
  }
}
