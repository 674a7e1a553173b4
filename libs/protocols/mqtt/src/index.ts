export { MqttModule } from './mqtt.module.js';
export { mqttConfig, type MqttConfig } from './mqtt-config.js';
export { MqttServer } from './mqtt-server.js';
export { MqttBroker } from './mqtt-broker.js';
export { MqttClient } from './mqtt-client.js';
export { dispatch } from './handlers/dispatch.js';
export type { ClientContext, MqttTransport } from './client-context.js';
export type { MqttSessionView } from './admin/session-view.js';
