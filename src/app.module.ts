import { type DynamicModule } from '@nestjs/common';
import { BusModule } from '#broker/bus';
import { type BrokerConfig } from '#broker/config';
import { GatewayModule } from '#broker/gateway';
import { GraphqlModule } from '#broker/protocols/graphql';
import { type Logger } from 'pino';
import { ChatModule } from '../apps/example-chat/src/chat.module.js';

/**
 * The composition root: the gateway, the bus and the subprotocol modules the broker serves:
 * the example chat.v1 module and GraphQL (default bus schema) so far.
 */
export class AppModule {
  static with(config: BrokerConfig, logger: Logger): DynamicModule {
    return {
      module: AppModule,
      imports: [GatewayModule.forRoot(config, logger), BusModule, ChatModule, GraphqlModule.forRoot()],
    };
  }
}
