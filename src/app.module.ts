import { type DynamicModule, Module } from '@nestjs/common';
import { BrokerModule } from '#broker/broker';
import { type BrokerConfig } from '#broker/config';
import { GraphqlModule } from '#broker/protocols/graphql';
import { MqttModule } from '#broker/protocols/mqtt';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import { WampModule } from '#broker/protocols/wamp';
import { type Logger } from 'pino';
import { ChatModule } from '../apps/example-chat/src/chat.module.js';

/**
 * The composition root: the subprotocol modules the broker serves, and (given the config read at
 * start) the broker itself: gateway, store, admin API, and the bus or the cluster.
 */
@Module({
  imports: [ChatModule, MqttModule, GraphqlModule.forRoot(), WampModule, Ocpp16Module],
})
export class AppModule {
  static with(config: BrokerConfig, logger: Logger): DynamicModule {
    return { module: AppModule, imports: [BrokerModule.forRoot({ ...config, logger })] };
  }
}
