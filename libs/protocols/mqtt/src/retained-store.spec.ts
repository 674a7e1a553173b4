import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { topicMatches } from '#broker/bus';
import { type MqttMessage } from './message.js';
import { RetainedStore } from './retained-store.js';

function message(topic: string, payload: string, expiresAt: number | null = null): MqttMessage {
  return {
    topic,
    payload: Buffer.from(payload),
    qos: 0,
    retain: true,
    publisherId: null,
    expiresAt,
    properties: {},
  };
}

/** When the spec's messages are stored. */
const AT = 1_000_000;

describe('RetainedStore', () => {
  it('remembers when each message was stored, the latest one per topic, and forgets it when cleared', () => {
    const store = new RetainedStore(10, 1024);
    store.store(message('s/a', 'one'), AT);
    store.store(message('s/b', 'two'), AT + 5);
    store.store(message('s/a', 'three'), AT + 9);
    assert.equal(store.storedAt('s/a'), AT + 9);
    assert.equal(store.storedAt('s/b'), AT + 5);
    store.store(message('s/b', ''), AT + 12);
    assert.equal(store.storedAt('s/b'), undefined);
    assert.equal(store.storedAt('s/none'), undefined);
  });

  it('keeps the last message per topic and an empty payload clears it', () => {
    const store = new RetainedStore(10, 1024);
    store.store(message('a/b', 'one'), AT);
    store.store(message('a/b', 'two'), AT);
    store.store(message('a/c', 'three'), AT);
    assert.deepEqual(
      store.matching('a/+', 0).map((m) => m.payload.toString()),
      ['two', 'three'],
    );
    store.store(message('a/b', ''), AT);
    assert.deepEqual(
      store.matching('a/#', 0).map((m) => m.topic),
      ['a/c'],
    );
  });

  it('refuses a new topic when full but still updates and clears existing ones', () => {
    const store = new RetainedStore(1, 1024);
    assert.equal(store.store(message('a', '1'), AT), true);
    assert.equal(store.store(message('b', '1'), AT), false);
    assert.equal(store.store(message('a', '2'), AT), true);
    assert.equal(store.store(message('a', ''), AT), true);
    assert.equal(store.store(message('b', '1'), AT), true);
  });

  it('refuses a message that would pass the byte bound, counting replacements and clears', () => {
    const store = new RetainedStore(10, 20);
    assert.equal(store.store(message('a', 'x'.repeat(10)), AT), true);
    assert.equal(store.store(message('b', 'x'.repeat(10)), AT), false);
    assert.equal(store.store(message('a', 'x'.repeat(18)), AT), true, 'replacing frees the old bytes');
    assert.equal(store.store(message('a', ''), AT), true);
    assert.equal(store.store(message('b', 'x'.repeat(18)), AT), true);
  });

  it('drops expired messages instead of returning them', () => {
    const store = new RetainedStore(10, 1024);
    store.store(message('old', 'x', 1000), AT);
    store.store(message('new', 'y', 5000), AT);
    assert.deepEqual(
      store.matching('#', 2000).map((m) => m.topic),
      ['new'],
    );
    assert.equal(store.size, 1);
  });

  it('finds what topicMatches finds, for every filter shape ($ topics, parent levels, empty levels)', () => {
    const topics = ['a', 'a/b', 'a/b/c', 'a//c', '/a', 'a/', 'b/b', '$SYS/x', '$SYS/x/y', 'a/b/c/d', 'x'];
    const filters = [
      '#',
      '+',
      '+/+',
      'a/#',
      'a/+',
      'a/+/c',
      '+/b/#',
      '/+',
      '+/',
      'a//c',
      '$SYS/#',
      '$SYS/+',
      'a/b/c/d',
      'a/b/c/d/#',
      'nothing/#',
      '+/#',
      '/#',
    ];
    const store = new RetainedStore(100, 1 << 20);
    for (const topic of topics) store.store(message(topic, topic), AT);
    for (const filter of filters) {
      const found = store
        .matching(filter, 0)
        .map((m) => m.topic)
        .sort();
      const expected = topics.filter((t) => topicMatches(filter, t)).sort();
      assert.deepEqual(found, expected, filter);
    }
    store.store(message('a/b', ''), AT);
    store.store(message('a/b/c', ''), AT);
    assert.deepEqual(
      store
        .matching('a/#', 0)
        .map((m) => m.topic)
        .sort(),
      ['a', 'a/', 'a//c', 'a/b/c/d'],
    );
    assert.equal(store.size, topics.length - 2);
  });
});
