import {
  Global,
  Inject,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { type BusMessage, InMemoryTopicBus, TOPIC_BUS, type TopicBus } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG, BROKER_LOGGER, GatewayMetrics, HealthChecks } from '#broker/gateway';
import { type Logger } from 'pino';
import { registerClusterMetrics } from './cluster-metrics.js';
import { ClusterNode } from './cluster-node.js';
import { defaultNodeId } from './node-id.js';
import { NatsTopicBus } from './nats-topic-bus.js';
import { StoreNotices } from './store-notices.js';

class ClusterLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Optional() @Inject(ClusterNode) private readonly node: ClusterNode | null,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics,
  ) {}

  onModuleInit(): void {
    const node = this.node;
    if (node === null || !(this.bus instanceof NatsTopicBus)) return;
    registerClusterMetrics(this.metrics, node, this.bus);
    this.health.add('nats', {
      check: async () => {
        if (!node.isConnected) throw new Error('NATS is unreachable');
        await node.nc.flush();
      },
      outage: () => (node.isConnected ? null : 'This node has lost NATS; try again shortly or another node.'),
    });
  }

  /** After the gateway's drain: stop listening, then leave (the others see this node go at once). */
  async onApplicationShutdown(): Promise<void> {
    if (this.node === null || !(this.bus instanceof NatsTopicBus)) return;
    this.bus.close();
    await this.node.leave();
  }
}

/**
 * The topic bus, and in cluster mode (cluster.natsUrl set) the node's place in the cluster: joins
 * NATS and provides the ClusterNode and the NATS-backed TOPIC_BUS; one process keeps the bus in
 * memory and its ClusterNode is null. Global, so protocol modules inject ClusterNode (optionally)
 * to reach the other nodes. The choice is made when the config is known, so BrokerModule.forRootAsync
 * can take a config that says either.
 */
@Global()
@Module({
  providers: [
    {
      provide: ClusterNode,
      inject: [BROKER_CONFIG, BROKER_LOGGER],
      useFactory: async (config: BrokerConfig, logger: Logger): Promise<ClusterNode | null> => {
        if (config.cluster.natsUrl === undefined) return null;
        const nodeId = config.cluster.nodeId ?? defaultNodeId(config.port);
        const node = await ClusterNode.join(config.cluster, nodeId, logger);
        logger.info({ node: nodeId, cluster: config.cluster.name }, 'joined the cluster');
        return node;
      },
    },
    {
      provide: TOPIC_BUS,
      inject: [ClusterNode, BROKER_LOGGER],
      useFactory: (node: ClusterNode | null, logger: Logger): TopicBus => {
        const log = logger.child({ module: 'bus' });
        const onHandlerError = (error: unknown, message: BusMessage) =>
          log.error(
            { topic: message.topic, origin: message.origin, err: (error as Error).message },
            'bus handler failed',
          );
        return node === null
          ? new InMemoryTopicBus({ onHandlerError })
          : new NatsTopicBus(node, { logger: log, onHandlerError });
      },
    },
    ClusterLifecycle,
    StoreNotices,
  ],
  exports: [ClusterNode, TOPIC_BUS],
})
export class ClusterModule {}
