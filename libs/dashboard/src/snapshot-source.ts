import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit, Optional } from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { EndpointRegistry, FEED_NODE_WAIT_MS, GatewayMetrics, HealthChecks } from '#broker/gateway';
import { Alarms } from './alarms.js';
import { NodeLoad } from './node-load.js';
import { natsOf, storeOf } from './node-status.js';
import { type NodeRow, type NodesView, type Snapshot } from './snapshot.types.js';

/** What each node answers the feed's node in cluster mode. */
const NODE_FIGURES = 'dashboard.node';

/**
 * One picture of the broker for the feed, from what the gateway already counts (connections and
 * messages per endpoint x subprotocol, handshake answers, recent refusals), what the modules report
 * (their counts and their panels) and, in cluster mode, every live node's own counts. Its cost does not
 * grow with the connections: none is visited.
 */
@Injectable()
export class SnapshotSource implements OnModuleInit, OnModuleDestroy {
  private readonly load = new NodeLoad();

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly endpoints: EndpointRegistry,
    private readonly alarms: Alarms,
    private readonly health: HealthChecks,
    @Optional() @Inject(ClusterNode) private readonly cluster: ClusterNode | null = null,
  ) {}

  onModuleInit(): void {
    this.cluster?.serve(NODE_FIGURES, () => this.nodeRow());
  }

  onModuleDestroy(): void {
    this.load.close();
  }

  watch(): void {
    this.metrics.panels.watch();
  }

  unwatch(): void {
    this.metrics.panels.unwatch();
  }

  async take(): Promise<Snapshot> {
    const connections = this.metrics.entries().map(({ labels, connection }) => ({
      endpoint: labels.endpoint,
      subprotocol: labels.subprotocol,
      open: connection.open,
      messagesIn: connection.traffic.messagesIn,
      messagesOut: connection.traffic.messagesOut,
    }));
    const handshakes: Record<string, number> = {};
    for (const { labels, value } of (await this.metrics.handshakes.get()).values) {
      const status = String(labels.status);
      handshakes[status] = (handshakes[status] ?? 0) + value;
    }
    let plain = 0;
    for (const { value } of (await this.metrics.plainRequests.get()).values) plain += value;
    handshakes['plain'] = plain;
    const { refusals } = this.metrics;
    // Both may wait FEED_NODE_WAIT_MS for a slow node: at once, so that a tick waits it once.
    const [panels, nodes] = await Promise.all([this.metrics.panels.read(), this.nodes()]);
    return {
      at: Date.now(),
      node: this.cluster?.nodeId ?? null,
      endpoints: this.endpoints.all().map((e) => e.config.path),
      connections,
      handshakes,
      refusals: { total: refusals.total, latest: refusals.latest() },
      modules: this.metrics.modules.cards(),
      panels,
      nodes,
      alarms: this.alarms.view(),
    };
  }

  /** Every live node's row (this node's alone on a single node), sorted by node id, and those missing. */
  async nodes(): Promise<NodesView> {
    if (this.cluster === null) return { answered: [this.nodeRow()], missing: [] };
    const { answers, missing } = await this.cluster.scatter<NodeRow>(NODE_FIGURES, {}, FEED_NODE_WAIT_MS);
    const answered = [...answers.values()].sort((a, b) => byNode(a.node, b.node));
    return { answered, missing };
  }

  private nodeRow(): NodeRow {
    let connections = 0;
    for (const { connection } of this.metrics.entries()) connections += connection.open;
    return {
      node: this.cluster?.nodeId ?? null,
      connections,
      load: this.load.read(),
      nats: natsOf(this.cluster),
      store: storeOf(this.health),
      modules: this.metrics.modules.read(),
    };
  }
}

function byNode(a: string | null, b: string | null): number {
  const [x, y] = [a ?? '', b ?? ''];
  return x < y ? -1 : x > y ? 1 : 0;
}
