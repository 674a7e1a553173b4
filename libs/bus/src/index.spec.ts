import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as bus from './index.js';
import type { TopicBus } from './index.js';

describe('public API', () => {
  it('exports exactly the intended runtime values', () => {
    assert.deepEqual(Object.keys(bus).sort(), [
      'InMemoryTopicBus',
      'InvalidTopicError',
      'MAX_TOPIC_BYTES',
      'TOPIC_BUS',
      'assertTopicFilter',
      'assertTopicName',
      'filterWithin',
      'filtersOverlap',
      'topicMatches',
    ]);
    assert.equal(typeof bus.TOPIC_BUS, 'symbol');
    assert.equal(bus.TOPIC_BUS.description, 'TOPIC_BUS');
  });

  it('lets InMemoryTopicBus stand in for TopicBus', () => {
    const topicBus: TopicBus = new bus.InMemoryTopicBus();
    assert.equal(topicBus.publish({ topic: 'a', payload: new Uint8Array(), origin: 'test' }), 0);
  });
});
