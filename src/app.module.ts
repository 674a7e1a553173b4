import { type DynamicModule, Module } from '@nestjs/common';
import { BrokerModule, type BrokerConfig } from 'ws-protocol-broker';
import { GraphqlModule } from 'ws-protocol-broker/graphql';
import { MqttModule } from 'ws-protocol-broker/mqtt';
import { Ocpp16Module } from 'ws-protocol-broker/ocpp16';
import { WampModule } from 'ws-protocol-broker/wamp';
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
