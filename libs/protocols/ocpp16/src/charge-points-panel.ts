import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { type BusSubscription, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { type DashboardPanel, GatewayMetrics, type PanelCalls, type PanelRow } from '#broker/gateway';
import { CALL_EXAMPLES } from './call-examples.js';
import { OcppRepositories } from './store/ocpp.repositories.js';

/** The panel shows this many charge points at most (by identity); the admin API lists them all. */
const MAX_CHARGE_POINTS = 50;
/** Ongoing transactions read per refresh, newest first. */
const MAX_TRANSACTIONS = 200;

/**
 * The dashboard's charge points, as the store knows them (boot, heartbeat, connector status, ongoing
 * transactions), read again only after the module announced a handled CALL on the bus
 * (`ocpp/<identity>/<Action>`), so a quiet central system costs no query per tick.
 */
@Injectable()
export class ChargePointsPanel implements DashboardPanel, OnModuleInit {
  readonly id = 'charge-points';
  readonly title = 'Charge points';
  readonly columns = [
    { key: 'identity', label: 'Identity' },
    { key: 'model', label: 'Model' },
    { key: 'connectors', label: 'Connectors' },
    { key: 'transactions', label: 'Ongoing transactions' },
    { key: 'lastHeartbeat', label: 'Last heartbeat', kind: 'time' },
  ] as const;
  readonly empty = 'No charge point has connected yet.';
  /** The page's form for the admin API's central-system calls (OcppCallsController). */
  readonly calls: PanelCalls = {
    title: 'Call a charge point',
    targetLabel: 'Charge point identity',
    route: 'charge-points/{target}/calls/{action}',
    actions: CALL_EXAMPLES,
  };

  private rowsRead: PanelRow[] = [];
  private stale = true;
  private subscription: BusSubscription | null = null;

  constructor(
    private readonly ocpp: OcppRepositories,
    private readonly metrics: GatewayMetrics,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
  ) {}

  onModuleInit(): void {
    this.metrics.panels.add(this);
  }

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

  async rows(): Promise<readonly PanelRow[]> {
    if (!this.stale) return this.rowsRead;
    // Cleared before reading: a change that lands during the queries marks the table stale again.
    this.stale = false;
    const stations = (await this.ocpp.stations.list()).slice(0, MAX_CHARGE_POINTS);
    const ongoing = await this.ocpp.transactions.list({ ongoing: true, limit: MAX_TRANSACTIONS });
    const rows: PanelRow[] = [];
    for (const station of stations) {
      const connectors = await this.ocpp.connectors.list(station.identity);
      const transactions = ongoing.filter((t) => t.identity === station.identity);
      rows.push({
        key: station.identity,
        cells: {
          identity: station.identity,
          model: [station.vendor, station.model].filter((v) => v !== null).join(' ') || null,
          connectors: connectors.map((c) => ({
            key: String(c.connectorId),
            text: `${c.connectorId}: ${c.status}${c.errorCode === 'NoError' ? '' : ` (${c.errorCode})`}`,
            status: c.status.toLowerCase(),
          })),
          transactions:
            transactions.map((t) => `#${t.id} on ${t.connectorId} since ${t.startedAt}`).join(', ') || null,
          lastHeartbeat: station.lastHeartbeatAt,
        },
      });
    }
    this.rowsRead = rows;
    return rows;
  }
}
