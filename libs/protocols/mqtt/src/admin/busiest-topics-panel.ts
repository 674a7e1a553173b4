import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import {
  type DashboardPanel,
  FEED_NODE_WAIT_MS,
  GatewayMetrics,
  type PanelColumn,
  type PanelRows,
} from '#broker/gateway';
import { BusiestTopics } from './busiest-topics.js';

/** The topics the panel shows at most (the counter holds up to MAX_COUNTED_TOPICS). */
export const MAX_BUSIEST_ROWS = 20;

const COLUMNS: readonly PanelColumn[] = [
  { key: 'topic', label: 'Topic' },
  { key: 'rate', label: 'Messages/s', kind: 'count' },
  { key: 'messages', label: 'Messages', kind: 'count' },
  { key: 'overcount', label: 'Of which maybe others', kind: 'count' },
];

/**
 * The dashboard's "Busiest MQTT topics": the topics MQTT clients publish to most, with their rate over
 * the last half to full minute (TopicRates): this node's on a single broker; in cluster mode every live
 * node's merged (BusiestTopics), with the nodes that counted each and those that did not answer. A
 * count may include up to its overcount of another topic's messages (the counter's bound).
 */
@Injectable()
export class BusiestTopicsPanel implements DashboardPanel, OnModuleInit {
  readonly id = 'mqtt-busiest-topics';
  readonly title: string;
  readonly columns: readonly PanelColumn[];
  readonly empty = 'No message published in the last minute.';

  constructor(
    private readonly topics: BusiestTopics,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {
    this.title = topics.clustered
      ? 'Busiest MQTT topics across the nodes (messages in, last minute)'
      : 'Busiest MQTT topics on this node (messages in, last minute)';
    this.columns = topics.clustered ? [...COLUMNS, { key: 'nodes', label: 'Nodes' }] : COLUMNS;
  }

  onModuleInit(): void {
    this.metrics?.panels.add(this);
  }

  async rows(): Promise<PanelRows> {
    const { topics, missing } = await this.topics.gather(FEED_NODE_WAIT_MS);
    const rows = topics.slice(0, MAX_BUSIEST_ROWS).map((r) => ({
      key: r.topic,
      cells: {
        topic: r.topic,
        rate: r.perSecond.toFixed(r.perSecond < 10 ? 2 : 1),
        messages: r.messages,
        overcount: r.overcount === 0 ? null : r.overcount,
        ...(this.topics.clustered && { nodes: r.nodes.join(', ') }),
      },
    }));
    return { rows, missing };
  }
}
