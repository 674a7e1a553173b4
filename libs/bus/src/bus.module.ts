import { Global, Logger, Module } from '@nestjs/common';
import type { BusMessage } from './bus.js';
import { TOPIC_BUS } from './bus.js';
import { InMemoryTopicBus } from './in-memory-topic-bus.js';

/** Global so every protocol module injects the same bus without importing BusModule itself. */
@Global()
@Module({
  providers: [
    {
      provide: TOPIC_BUS,
      useFactory: (): InMemoryTopicBus => {
        // Nest's Logger forwards to whichever logger the application installed.
        const logger = new Logger('TopicBus');
        return new InMemoryTopicBus({
          onHandlerError: (error: unknown, message: BusMessage) =>
            logger.error(
              `Handler failed for topic ${JSON.stringify(message.topic)} from ${message.origin}`,
              error instanceof Error ? error.stack : String(error),
            ),
        });
      },
    },
  ],
  exports: [TOPIC_BUS],
})
export class BusModule {}
