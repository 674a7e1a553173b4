import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { type DashboardPanel, GatewayMetrics, type PanelRow } from '#broker/gateway';
import { MqttServer } from '../mqtt-server.js';

/** The topics the panel shows at most (the counter holds up to MAX_COUNTED_TOPICS). */
export const MAX_BUSIEST_ROWS = 20;

/**
 * The dashboard's "Busiest topics on this node": the topics MQTT clients publish to most here, with
 * their rate over the last half to full minute (TopicRates). Each node counts its own clients' PUBLISH
 * packets; a count may include up to its overcount of another topic's messages (the counter's bound).
 */
@Injectable()
export class BusiestTopicsPanel implements DashboardPanel, OnModuleInit {
  readonly id = 'mqtt-busiest-topics';
  readonly title = 'Busiest MQTT topics on this node (messages in, last minute)';
  readonly columns = [
    { key: 'topic', label: 'Topic' },
    { key: 'rate', label: 'Messages/s', kind: 'count' },
    { key: 'messages', label: 'Messages', kind: 'count' },
    { key: 'overcount', label: 'Of which maybe others', kind: 'count' },
  ] as const;
  readonly empty = 'No message published in the last minute.';

  constructor(
    private readonly server: MqttServer,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  onModuleInit(): void {
    this.metrics?.panels.add(this);
  }

  rows(): readonly PanelRow[] {
    return this.server.broker.topicRates.busiest(MAX_BUSIEST_ROWS).map((r) => ({
      key: r.topic,
      cells: {
        topic: r.topic,
        rate: r.perSecond.toFixed(r.perSecond < 10 ? 2 : 1),
        messages: r.messages,
        overcount: r.overcount === 0 ? null : r.overcount,
      },
    }));
  }
}
