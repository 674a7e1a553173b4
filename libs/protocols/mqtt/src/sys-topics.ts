import { type MqttBroker } from './mqtt-broker.js';

/**
 * Publishes the broker's statistics as retained messages under `$SYS/broker/` (the Mosquitto
 * names), so a client subscribing to `$SYS/#` gets the current values at once.
 */
export function publishSysTopics(broker: MqttBroker): void {
  const { stats } = broker;
  const values: Record<string, number> = {
    'clients/connected': broker.connectedCount,
    'clients/total': broker.sessions.size,
    'messages/received': stats.messagesReceived,
    'messages/sent': stats.messagesSent,
    'publish/messages/received': stats.publishReceived,
    'publish/messages/sent': stats.publishSent,
    'publish/messages/dropped': stats.publishDropped,
    'load/bytes/received': stats.bytesReceived,
    'load/bytes/sent': stats.bytesSent,
    'retained messages/count': broker.retained.size,
    'subscriptions/count': broker.subscriptions.size,
    uptime: Math.floor((broker.clock.now() - stats.startedAt) / 1000),
  };
  for (const [name, value] of Object.entries(values)) {
    const message = {
      topic: `$SYS/broker/${name}`,
      payload: Buffer.from(String(value)),
      qos: 0 as const,
      retain: true,
      publisherId: null,
      expiresAt: null,
      properties: {},
    };
    broker.retained.store(message, broker.clock.now());
    broker.route(message);
  }
}
