import {
  type DynamicModule,
  Global,
  Inject,
  Module,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { type BusMessage, TOPIC_BUS } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import { GatewayMetrics, HealthChecks } from '#broker/gateway';
import { type Logger } from 'pino';
import { registerClusterMetrics } from './cluster-metrics.js';
import { ClusterNode, defaultNodeId } from './cluster-node.js';
import { NatsTopicBus } from './nats-topic-bus.js';
import { StoreNotices } from './store-notices.js';

class ClusterLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(
    @Inject(ClusterNode) private readonly node: ClusterNode,
    @Inject(TOPIC_BUS) private readonly bus: NatsTopicBus,
    @Inject(HealthChecks) private readonly health: HealthChecks,
    @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics,
  ) {}

  onModuleInit(): void {
    registerClusterMetrics(this.metrics, this.node, this.bus);
    this.health.add('nats', {
      check: async () => {
        if (!this.node.isConnected) throw new Error('NATS is unreachable');
        await this.node.nc.flush();
      },
      outage: () =>
        this.node.isConnected ? null : 'This node has lost NATS; try again shortly or another node.',
    });
  }

  /** After the gateway's drain: stop listening, then leave (the others see this node go at once). */
  async onApplicationShutdown(): Promise<void> {
    this.bus.close();
    await this.node.leave();
  }
}

/**
 * Cluster mode (cluster.natsUrl set): joins NATS and provides the ClusterNode and the NATS-backed
 * TOPIC_BUS in place of BusModule's in-memory one. Global, so protocol modules inject ClusterNode
 * (optionally: without cluster mode there is none) to reach the other nodes.
 */
@Global()
@Module({})
export class ClusterModule {
  static forRoot(config: BrokerConfig, logger: Logger): DynamicModule {
    const nodeId = config.cluster.nodeId ?? defaultNodeId(config.port);
    return {
      module: ClusterModule,
      providers: [
        {
          provide: ClusterNode,
          useFactory: async () => {
            const node = await ClusterNode.join(config.cluster, nodeId, logger);
            logger.info({ node: nodeId, cluster: config.cluster.name }, 'joined the cluster');
            return node;
          },
        },
        {
          provide: TOPIC_BUS,
          inject: [ClusterNode],
          useFactory: (node: ClusterNode) => {
            const log = logger.child({ module: 'bus' });
            return new NatsTopicBus(node, {
              logger: log,
              onHandlerError: (error: unknown, message: BusMessage) =>
                log.error(
                  { topic: message.topic, origin: message.origin, err: (error as Error).message },
                  'bus handler failed',
                ),
            });
          },
        },
        ClusterLifecycle,
        StoreNotices,
      ],
      exports: [ClusterNode, TOPIC_BUS],
    };
  }
}
