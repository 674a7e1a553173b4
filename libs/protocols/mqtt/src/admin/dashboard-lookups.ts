import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { GatewayMetrics } from '#broker/gateway';
import { RetainedDashboardLookup } from './retained-dashboard-lookup.js';
import { SessionDashboardLookup } from './session-dashboard-lookup.js';
import { SubscribersDashboardLookup } from './subscribers-dashboard-lookup.js';

/**
 * Adds the MQTT module's dashboard lookups in one order, the session first (the page offers the first
 * one to begin with): each adding itself would leave the order to when Nest happens to initialise it.
 */
@Injectable()
export class MqttDashboardLookups implements OnModuleInit {
  constructor(
    private readonly session: SessionDashboardLookup,
    private readonly retained: RetainedDashboardLookup,
    private readonly subscribers: SubscribersDashboardLookup,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  onModuleInit(): void {
    for (const lookup of [this.session, this.retained, this.subscribers]) this.metrics?.lookups.add(lookup);
  }
}
