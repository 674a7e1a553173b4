import { Module } from '@nestjs/common';
import { BrokerModule, createLogger, flushAndExit, loadConfig, startBroker } from 'ws-protocol-broker';
import { ChatModule } from './chat.module.js';

/**
 * An application that extends the broker with its own subprotocol: chat.v1 on /chat, where a
 * client authenticates with its first message ({"type":"auth","token":"<JWT>"}) or any other carrier.
 * Needs JWT_SECRET (32+ characters).
 */
const config = loadConfig({
  defaults: {
    port: 8081,
    store: { sqlitePath: ':memory:' },
    endpoints: [
      {
        path: '/chat',
        subprotocols: ['chat.v1'],
        defaultModule: 'chat.v1',
        auth: { mode: 'required' },
      },
    ],
  },
});
const logger = createLogger(config.log.level);

@Module({ imports: [BrokerModule.forRoot({ ...config, logger, adminApi: false }), ChatModule] })
class ChatAppModule {}

startBroker(ChatAppModule, config, logger, { exitOnSignals: true }).catch((err: Error) => {
  logger.fatal({ err: err.message }, 'chat example failed to start');
  flushAndExit(logger, 1);
});
