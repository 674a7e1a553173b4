import { Module } from '@nestjs/common';
import { BrokerSection } from '#broker/config';
import { BusiestTopics } from './admin/busiest-topics.js';
import { BusiestTopicsPanel } from './admin/busiest-topics-panel.js';
import { MqttDashboardLookups } from './admin/dashboard-lookups.js';
import { MqttDashboardTraces } from './admin/dashboard-traces.js';
import { RetainedDashboardLookup } from './admin/retained-dashboard-lookup.js';
import { SessionDashboardLookup } from './admin/session-dashboard-lookup.js';
import { SessionLookup } from './admin/session-lookup.js';
import { MqttSessionsController } from './admin/sessions.controller.js';
import { SubscribersDashboardLookup } from './admin/subscribers-dashboard-lookup.js';
import { MqttTopicsController } from './admin/topics.controller.js';
import { mqttConfig } from './mqtt-config.js';
import { Mqtt31Subprotocol, MqttSubprotocol } from './mqtt.subprotocol.js';
import { MqttServer } from './mqtt-server.js';
import { MqttTcpListener } from './tcp-listener.js';

/**
 * The MQTT broker: `mqtt` and `mqttv3.1` over WebSocket, and plain TCP when configured, its admin
 * routes (a session by client id, the busiest topics across the nodes), the dashboard's lookups: a
 * session by client id, the retained messages matching a topic filter, the subscribers of a topic; its
 * panel of the busiest topics; and its traces (a client id, a topic filter). Its settings are the
 * `mqtt` key of the broker config.
 */
@BrokerSection(mqttConfig)
@Module({
  controllers: [MqttSessionsController, MqttTopicsController],
  providers: [
    MqttServer,
    MqttSubprotocol,
    Mqtt31Subprotocol,
    MqttTcpListener,
    SessionLookup,
    SessionDashboardLookup,
    RetainedDashboardLookup,
    SubscribersDashboardLookup,
    MqttDashboardLookups,
    MqttDashboardTraces,
    BusiestTopics,
    BusiestTopicsPanel,
  ],
})
export class MqttModule {}
