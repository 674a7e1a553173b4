import { Module } from '@nestjs/common';
import { BrokerSection } from '#broker/config';
import { wampConfig } from './wamp-config.js';
import { WampSubprotocol } from './wamp.subprotocol.js';

/** The WAMP v2 router (`wamp.2.json`); its settings are the `wamp` key of the broker config. */
@BrokerSection(wampConfig)
@Module({ providers: [WampSubprotocol] })
export class WampModule {}
