import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TOPIC_BUS } from './bus.js';
import type { TopicBus } from './bus.js';
import { BusModule } from './bus.module.js';
import { InMemoryTopicBus } from './in-memory-topic-bus.js';

@Injectable()
class Consumer {
  constructor(@Inject(TOPIC_BUS) readonly bus: TopicBus) {}
}

/** Does not import BusModule: the bus must reach it because BusModule is global. */
@Module({ providers: [Consumer], exports: [Consumer] })
class ConsumerModule {}

describe('BusModule', () => {
  it('provides one in-memory bus to every module', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [BusModule, ConsumerModule] }).compile();
    try {
      const bus = moduleRef.get<TopicBus>(TOPIC_BUS);
      assert.ok(bus instanceof InMemoryTopicBus);
      assert.equal(moduleRef.get(Consumer).bus, bus);
      const topics: string[] = [];
      bus.subscribe('chat/+', (m) => topics.push(m.topic));
      assert.equal(
        moduleRef
          .get(Consumer)
          .bus.publish({ topic: 'chat/room', payload: new Uint8Array(), origin: 'test' }),
        1,
      );
      assert.deepEqual(topics, ['chat/room']);
    } finally {
      await moduleRef.close();
    }
  });

  it('isolates a throwing handler', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [BusModule] })
      .setLogger({ log() {}, error() {}, warn() {} })
      .compile();
    try {
      const bus = moduleRef.get<TopicBus>(TOPIC_BUS);
      let reached = false;
      bus.subscribe('t', () => {
        throw new Error('handler');
      });
      bus.subscribe('t', () => (reached = true));
      assert.equal(bus.publish({ topic: 't', payload: new Uint8Array(), origin: 'test' }), 2);
      assert.ok(reached);
    } finally {
      await moduleRef.close();
    }
  });
});
