import { Module } from '@nestjs/common';
import { BrokerModule, BrokerSection, type BrokerConfigWithSections } from 'ws-protocol-broker';
import { HelloController } from './hello.controller.js';
import { RoomsGateway } from './rooms.gateway.js';
import { ShoutBoard } from './shout-board.js';
import { ShoutCounts } from './shout-counts.js';
import { ShoutsController } from './shouts.controller.js';
import { SHOUT_CONFIG } from './shout.config.js';
import { ShoutSubprotocol } from './shout.subprotocol.js';

/** The broker's part of this application's configuration (in a real app, from its ConfigService). */
export function brokerConfig(env: NodeJS.ProcessEnv = process.env): BrokerConfigWithSections {
  return {
    jwt: { secret: env['JWT_SECRET'] ?? 'example-secret-change-me-32-characters!' },
    store: { sqlitePath: env['BROKER_DB'] ?? ':memory:' },
    // The shout module's own key (SHOUT_CONFIG), beside the broker's.
    shout: { maxLength: Number(env['SHOUT_MAX_LENGTH'] ?? 280) },
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
 * What this application adds: its route; its subprotocol module with its config key (declared here,
 * as the broker's own protocols declare theirs: loading the module is enough), its table, its admin
 * route and its dashboard card and panel; its gateway.
 */
@BrokerSection(SHOUT_CONFIG)
@Module({
  controllers: [HelloController, ShoutsController],
  providers: [ShoutCounts, ShoutBoard, ShoutSubprotocol, RoomsGateway],
})
export class FeaturesModule {}

@Module({
  imports: [BrokerModule.forRootAsync({ useFactory: () => brokerConfig() }), FeaturesModule],
})
export class AppModule {}
