import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type DashboardPanel, GatewayMetrics, type PanelRow } from 'ws-protocol-broker';
import { ShoutCounts } from './shout-counts.js';

/** The panel lists this many of the loudest users. */
const PANEL_ROWS = 50;

/**
 * What the shout module shows on the broker's dashboard, through the package's public API alone: a
 * card with its counts and a panel of the loudest users (from its table).
 */
@Injectable()
export class ShoutBoard implements DashboardPanel, OnModuleInit {
  readonly id = 'shouters';
  readonly title = 'Shouters';
  readonly columns = [
    { key: 'user', label: 'User' },
    { key: 'shouts', label: 'Shouts', kind: 'count' },
    { key: 'last', label: 'Last shout', kind: 'time' },
  ] as const;
  readonly empty = 'Nobody has shouted yet.';

  private shouts = 0;
  private failed = 0;

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly counts: ShoutCounts,
  ) {}

  onModuleInit(): void {
    this.metrics.modules.report('shout.v1', {
      title: 'Shout',
      labels: { shouts: 'Shouts since start', unrecorded: 'Not recorded' },
      read: () => ({ shouts: this.shouts, unrecorded: this.failed }),
    });
    this.metrics.panels.add(this);
  }

  /** Counts a shout; resolves once the table holds it. */
  async shouted(user: string): Promise<void> {
    this.shouts++;
    await this.counts.add(user).catch((err: unknown) => {
      this.failed++;
      throw err;
    });
  }

  async rows(): Promise<readonly PanelRow[]> {
    const loudest = await this.counts.loudest(PANEL_ROWS);
    return loudest.map(({ user, shouts, lastAt }) => ({ key: user, cells: { user, shouts, last: lastAt } }));
  }
}
