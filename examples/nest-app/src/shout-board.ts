import { Injectable, type OnModuleInit } from '@nestjs/common';
import { type DashboardPanel, GatewayMetrics, type PanelRow } from 'ws-protocol-broker';

/** The board keeps this many shouters (the loudest); a new one past it replaces the quietest. */
const MAX_SHOUTERS = 100;

/**
 * What the shout module shows on the broker's dashboard, through the package's public API alone: a
 * card with its counts and a panel of the loudest users.
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

  private readonly shouters = new Map<string, { shouts: number; last: string }>();
  private total = 0;

  constructor(private readonly metrics: GatewayMetrics) {}

  onModuleInit(): void {
    this.metrics.modules.report('shout.v1', {
      title: 'Shout',
      labels: { shouts: 'Shouts', shouters: 'Shouters' },
      read: () => ({ shouts: this.total, shouters: this.shouters.size }),
    });
    this.metrics.panels.add(this);
  }

  shouted(user: string): void {
    this.total++;
    const known = this.shouters.get(user);
    if (known === undefined && this.shouters.size >= MAX_SHOUTERS) this.dropQuietest();
    this.shouters.set(user, { shouts: (known?.shouts ?? 0) + 1, last: new Date().toISOString() });
  }

  rows(): readonly PanelRow[] {
    return [...this.shouters]
      .sort(([, a], [, b]) => b.shouts - a.shouts)
      .map(([user, { shouts, last }]) => ({ key: user, cells: { user, shouts, last } }));
  }

  private dropQuietest(): void {
    let quietest: string | null = null;
    let fewest = Infinity;
    for (const [user, { shouts }] of this.shouters) {
      if (shouts < fewest) [quietest, fewest] = [user, shouts];
    }
    if (quietest !== null) this.shouters.delete(quietest);
  }
}
