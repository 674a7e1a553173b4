import { type DynamicModule } from '@nestjs/common';
import { AdminModule } from '#broker/admin';
import { BusModule } from '#broker/bus';
import { ClusterModule } from '#broker/cluster';
import { type BrokerConfig } from '#broker/config';
import { GatewayModule } from '#broker/gateway';
import { GraphqlModule } from '#broker/protocols/graphql';
import { MqttModule } from '#broker/protocols/mqtt';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import { WampModule } from '#broker/protocols/wamp';
import { StoreModule } from '#broker/store';
import { type Logger } from 'pino';
import { ChatModule } from '../apps/example-chat/src/chat.module.js';

/**
 * The composition root: the gateway, the store and its admin API, the bus (or the cluster) and the
 * subprotocol modules the broker serves.
 */
export class AppModule {
  static with(config: BrokerConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [
        GatewayModule.forRoot(config, logger),
        StoreModule.forRoot(config.store, logger),
        AdminModule.forRoot(),
        // Several nodes share the bus over NATS; one process keeps it in memory.
        config.cluster.natsUrl === undefined ? BusModule : ClusterModule.forRoot(config, logger),
        ChatModule,
        MqttModule,
        GraphqlModule.forRoot(),
        WampModule,
        Ocpp16Module,
      ],
    };
  }
}
