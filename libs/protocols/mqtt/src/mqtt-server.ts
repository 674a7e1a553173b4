import {
  Inject,
  Injectable,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ClusterNode } from '#broker/cluster';
import { PASSWORD_CHECK, TopicAuthorizer, type PasswordCheck } from '#broker/auth';
import { TOPIC_BUS, type BusSubscription, type TopicBus } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import { BROKER_CONFIG, BROKER_LOGGER, GatewayMetrics } from '#broker/gateway';
import { Counter } from 'prom-client';
import { type Logger } from 'pino';
import { MqttBroker } from './mqtt-broker.js';
import { bridgeBus } from './bus-bridge.js';
import { ClusterRetained } from './cluster/cluster-retained.js';
import { ClusterQueues } from './cluster/cluster-queues.js';
import { ClusterSessions } from './cluster/cluster-sessions.js';
import { ClusterShares } from './cluster/cluster-shares.js';
import { type ClientContext, type MqttTransport } from './client-context.js';
import { dispatch } from './handlers/dispatch.js';
import { MqttClient } from './mqtt-client.js';
import { mqttConfig } from './mqtt-config.js';
import { publishSysTopics } from './sys-topics.js';

/**
 * The one broker behind every MQTT transport (both WebSocket subprotocols and the TCP listener),
 * with its bus bridge and $SYS timer.
 */
@Injectable()
export class MqttServer implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  readonly broker: MqttBroker;
  readonly logger: Logger;
  private busSubscription: BusSubscription | null = null;
  private sysTimer: NodeJS.Timeout | null = null;
  /** Cluster mode: retained messages and sessions shared through KV buckets. */
  private readonly retained: ClusterRetained | null;
  private readonly sessions: ClusterSessions | null;
  private readonly queues: ClusterQueues | null;
  private readonly shares: ClusterShares | null;

  constructor(
    @Inject(BROKER_CONFIG) readonly config: BrokerConfig,
    @Inject(BROKER_LOGGER) logger: Logger,
    @Inject(TOPIC_BUS) private readonly bus: TopicBus,
    @Inject(TopicAuthorizer) authorizer: TopicAuthorizer,
    // Provided by the store; MQTT over TCP checks CONNECT's passwords with it.
    @Optional() @Inject(PASSWORD_CHECK) readonly passwords: PasswordCheck | null = null,
    @Optional() @Inject(ClusterNode) cluster: ClusterNode | null = null,
    @Optional() @Inject(GatewayMetrics) metrics: GatewayMetrics | null = null,
  ) {
    this.logger = logger.child({ module: 'mqtt' });
    // `mqtt:publish:` and `mqtt:subscribe:`, the older names of the `bus:` scopes, restrict every protocol.
    authorizer.addScopeAlias('mqtt');
    this.broker = new MqttBroker(mqttConfig.of(config), authorizer);
    // The reasons are a few fixed strings of the broker's: a bounded label.
    const dropped =
      metrics === null
        ? null
        : new Counter({
            name: 'broker_mqtt_messages_dropped_total',
            help: 'MQTT messages dropped, by reason (slow subscriber, session queue full, retained store full, ...)',
            labelNames: ['reason'] as const,
            registers: [metrics.registry],
          });
    metrics?.modules.report('mqtt', {
      title: 'MQTT',
      labels: {
        sessions: 'Sessions',
        connected: 'Connected',
        subscriptions: 'Subscriptions',
        retained: 'Retained messages',
        queued: 'Queued messages',
      },
      read: () => this.broker.figures(),
    });
    this.broker.hooks.dropped = (why, clientId, topic) => {
      dropped?.inc({ reason: why });
      this.logger.debug({ why, clientId, topic }, 'mqtt message dropped');
    };
    this.retained = cluster === null ? null : new ClusterRetained(cluster, this.broker, this.logger);
    this.sessions = cluster === null ? null : new ClusterSessions(cluster, this.broker, this.logger);
    this.queues = cluster === null ? null : new ClusterQueues(cluster, this.broker, this.logger);
    if (this.queues !== null) metrics?.alarms.add(this.queues.alarm);
    this.shares = cluster === null ? null : new ClusterShares(this.broker, bus);
  }

  /** Before any client connects, the retained messages of the cluster are loaded. */
  async onModuleInit(): Promise<void> {
    await this.retained?.start();
    await this.sessions?.start();
    await this.queues?.start();
  }

  async onApplicationBootstrap(): Promise<void> {
    this.busSubscription = bridgeBus(this.broker, this.bus);
    // Wills of sessions a gone node left go out through the bridge: it is up now.
    await this.sessions?.sweep();
    const interval = mqttConfig.of(this.config).sysIntervalSec;
    if (interval > 0) {
      publishSysTopics(this.broker);
      this.sysTimer = setInterval(() => publishSysTopics(this.broker), interval * 1000);
      this.sysTimer.unref();
    }
  }

  onApplicationShutdown(): void {
    this.retained?.stop();
    this.sessions?.stop();
    this.queues?.stop();
    this.shares?.stop();
    if (this.sysTimer !== null) clearInterval(this.sysTimer);
    this.busSubscription?.unsubscribe();
    this.broker.lifecycle.stopAll();
  }

  open(transport: MqttTransport, context: ClientContext): MqttClient {
    return new MqttClient(this.broker, transport, context, this.logger, dispatch);
  }
}
