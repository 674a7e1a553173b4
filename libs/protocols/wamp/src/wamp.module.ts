import { Module } from '@nestjs/common';
import { WampSubprotocol } from './wamp.subprotocol.js';

/** The WAMP v2 router (`wamp.2.json`); its settings are the `wamp` section of the broker config. */
@Module({ providers: [WampSubprotocol] })
export class WampModule {}
