import { Module } from '@nestjs/common';
import { Alarms } from './alarms.js';
import { DASHBOARD_ASSETS, loadAssets } from './dashboard-assets.js';
import { DashboardPageController } from './dashboard-page.controller.js';
import { FeedController } from './feed.controller.js';
import { LiveFeed } from './live-feed.js';
import { NodesController } from './nodes.controller.js';
import { PanelCallsController } from './panel-calls.controller.js';
import { SnapshotSource } from './snapshot-source.js';

/**
 * The live dashboard: the page at /dashboard, its feed at /admin/v1/dashboard/feed, the panels' calls
 * at /admin/v1/dashboard/panel-calls and its nodes table at /admin/v1/nodes (needs the broker's
 * gateway, store and bus, and the admin API, whose credential it takes).
 */
@Module({
  controllers: [DashboardPageController, FeedController, PanelCallsController, NodesController],
  providers: [
    { provide: DASHBOARD_ASSETS, useFactory: () => loadAssets() },
    Alarms,
    SnapshotSource,
    LiveFeed,
  ],
})
export class DashboardModule {}
