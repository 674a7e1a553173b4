import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { assertTopicFilter } from '#broker/bus';
import { type DashboardTrace, GatewayMetrics } from '#broker/gateway';
import { MqttServer } from '../mqtt-server.js';

/**
 * The MQTT module's kinds of trace, on each node's broker: a client by its id (its CONNECT and CONNACK,
 * DISCONNECT, PUBLISHes in, SUBSCRIBE and UNSUBSCRIBE, deliveries to it, and deliveries of its messages
 * to others), and a topic filter (every PUBLISH in on a matching topic and every delivery of it).
 */
@Injectable()
export class MqttDashboardTraces implements OnModuleInit {
  constructor(
    private readonly server: MqttServer,
    @Optional() @Inject(GatewayMetrics) private readonly metrics: GatewayMetrics | null = null,
  ) {}

  onModuleInit(): void {
    this.metrics?.traces.add(this.client());
    this.metrics?.traces.add(this.topics());
  }

  private client(): DashboardTrace {
    return {
      id: 'mqtt-client',
      title: 'MQTT client',
      keyLabel: 'Client id',
      invalid: () => null,
      follow: (clientId, sink) => this.server.broker.traces.followClient(clientId, sink),
    };
  }

  private topics(): DashboardTrace {
    return {
      id: 'mqtt-topic',
      title: 'MQTT topic filter',
      keyLabel: 'Topic filter',
      invalid: (filter) => {
        try {
          assertTopicFilter(filter);
          return null;
        } catch (err) {
          return (err as Error).message;
        }
      },
      follow: (filter, sink) => this.server.broker.traces.followTopics(filter, sink),
    };
  }
}
