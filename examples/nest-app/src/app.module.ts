import { Module } from '@nestjs/common';
import { BrokerModule, type BrokerConfigInput } from 'ws-protocol-broker';
import { HelloController } from './hello.controller.js';
import { RoomsGateway } from './rooms.gateway.js';
import { ShoutBoard } from './shout-board.js';
import { ShoutCounts } from './shout-counts.js';
import { ShoutsController } from './shouts.controller.js';
import { ShoutSubprotocol } from './shout.subprotocol.js';

/** The broker's part of this application's configuration (in a real app, from its ConfigService). */
export function brokerConfig(env: NodeJS.ProcessEnv = process.env): BrokerConfigInput {
  return {
    jwt: { secret: env['JWT_SECRET'] ?? 'example-secret-change-me-32-characters!' },
    store: { sqlitePath: env['BROKER_DB'] ?? ':memory:' },
    endpoints: [
      { path: '/shout', subprotocols: ['shout.v1'], defaultModule: 'shout.v1' },
      {
        path: '/rooms/:room',
        subprotocols: ['rooms.v1'],
        defaultModule: 'rooms.v1',
        auth: { mode: 'required', carriers: ['header', 'query'] },
      },
    ],
  };
}

/**
 * What this application adds: its route; its subprotocol module with its table, its admin route and
 * its dashboard card and panel; its gateway.
 */
@Module({
  controllers: [HelloController, ShoutsController],
  providers: [ShoutCounts, ShoutBoard, ShoutSubprotocol, RoomsGateway],
})
export class FeaturesModule {}

@Module({
  imports: [BrokerModule.forRootAsync({ useFactory: () => brokerConfig() }), FeaturesModule],
})
export class AppModule {}
