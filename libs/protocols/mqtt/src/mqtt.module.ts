import { Module } from '@nestjs/common';
import { BrokerSection } from '#broker/config';
import { mqttConfig } from './mqtt-config.js';
import { Mqtt31Subprotocol, MqttSubprotocol } from './mqtt.subprotocol.js';
import { MqttServer } from './mqtt-server.js';
import { MqttTcpListener } from './tcp-listener.js';

/**
 * The MQTT broker: `mqtt` and `mqttv3.1` over WebSocket, and plain TCP when configured. Its settings
 * are the `mqtt` key of the broker config.
 */
@BrokerSection(mqttConfig)
@Module({ providers: [MqttServer, MqttSubprotocol, Mqtt31Subprotocol, MqttTcpListener] })
export class MqttModule {}
