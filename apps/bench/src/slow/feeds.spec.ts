import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import mqttPacket from 'mqtt-packet';
import { FEEDS, type Feed } from './feeds.js';

function feed(name: string): Feed {
  const found = FEEDS.find((f) => f.name === name);
  assert.ok(found, name);
  return found;
}

/** What the broker sends a subscriber for an event whose payload is `payload`, per feed. */
const DELIVERED: Record<string, (payload: string) => Buffer> = {
  'MQTT QoS 0': (payload) =>
    mqttPacket.generate({ cmd: 'publish', topic: 'feeds/mqtt0', payload, qos: 0, retain: false, dup: false }),
  'MQTT QoS 1': (payload) =>
    mqttPacket.generate({
      cmd: 'publish',
      topic: 'feeds/mqtt1',
      payload,
      qos: 1,
      messageId: 7,
      retain: false,
      dup: false,
    }),
  'GraphQL subscription': (payload) =>
    Buffer.from(JSON.stringify({ type: 'next', payload: { data: { topic: { payload } } }, id: 's' })),
  'WAMP subscription': (payload) => Buffer.from(JSON.stringify([36, 1, 2, {}, [payload]])),
  'chat room': (payload) =>
    Buffer.from(JSON.stringify({ type: 'message', room: 'feeds-chat', user: 'a', text: payload })),
};

describe('benchmark feeds', () => {
  it("read back each event's sequence number from what a subscriber gets", () => {
    for (const f of FEEDS) {
      const deliver = DELIVERED[f.name];
      assert.ok(deliver, f.name);
      assert.deepEqual(f.events(deliver(`41:${'q'.repeat(300)}`)), [41], f.name);
      assert.deepEqual(f.events(Buffer.from('something else')), [], f.name);
    }
  });

  it('put the sequence number first in what they publish', () => {
    assert.ok(feed('chat room').publish(5, 'x').toString().includes('"text":"5:x"'));
    assert.ok(feed('WAMP subscription').publish(5, 'x').toString().includes('["5:x"]'));
  });
});
