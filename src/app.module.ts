import { type DynamicModule } from '@nestjs/common';
import { BusModule } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import { GatewayModule } from '#broker/gateway';
import { MqttModule } from '#broker/protocols/mqtt';
import { type Logger } from 'pino';
import { ChatModule } from '../apps/example-chat/src/chat.module.js';

/**
 * The composition root: the gateway, the bus and the subprotocol modules the broker serves.
 * `npm start` serves the example chat.v1 module and the MQTT broker.
 */
export class AppModule {
  static with(config: BrokerConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [GatewayModule.forRoot(config, logger), BusModule, ChatModule, MqttModule],
    };
  }
}
