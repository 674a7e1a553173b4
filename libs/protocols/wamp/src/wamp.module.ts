import { Module } from '@nestjs/common';
import { BrokerSection } from '#broker/config';
import { BrokerStore } from '#broker/store';
import { CraCredentialsController } from './admin/cra-credentials.controller.js';
import { CraCredentials } from './store/cra-credentials.js';
import { wampConfig } from './wamp-config.js';
import { WampSubprotocol } from './wamp.subprotocol.js';

/**
 * The WAMP v2 router (`wamp.2.json`) and its stored WAMP-CRA credentials (their admin route and index);
 * its settings are the `wamp` key of the broker config.
 */
@BrokerSection(wampConfig)
@Module({
  controllers: [CraCredentialsController],
  providers: [
    {
      provide: CraCredentials,
      inject: [BrokerStore],
      useFactory: (store: BrokerStore) => CraCredentials.open(store),
    },
    WampSubprotocol,
  ],
})
export class WampModule {}
