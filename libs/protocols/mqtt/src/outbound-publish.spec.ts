import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttMessage } from './message.js';
import { encodePublish, OutboundAliases } from './outbound-publish.js';
import { type Delivery } from './delivery.js';

const message: MqttMessage = {
  topic: 'fan/out',
  payload: Buffer.from('x'),
  qos: 1,
  retain: false,
  publisherId: null,
  expiresAt: null,
  properties: {},
};

function delivery(extra: Partial<Delivery> = {}): Delivery {
  return { message, qos: 0, retain: false, subscriptionIds: [], ...extra };
}

describe('encodePublish', () => {
  it('encodes an identical QoS 0 send once per protocol version within one routed message', () => {
    const encodings = new Map<string, Buffer>();
    const a = encodePublish(delivery({ encodings }), false, 4, undefined, 0);
    const b = encodePublish(delivery({ encodings }), false, 4, undefined, 0);
    const v5 = encodePublish(delivery({ encodings }), false, 5, undefined, 0);
    assert.equal(a, b, 'the same buffer');
    assert.notEqual(a, v5);
    assert.equal(encodings.size, 2);
  });

  it('encodes per subscriber what differs: subscription ids, aliases', () => {
    const encodings = new Map<string, Buffer>();
    const plain = encodePublish(delivery({ encodings }), false, 5, undefined, 0);
    const withId = encodePublish(delivery({ encodings, subscriptionIds: [3] }), false, 5, undefined, 0);
    const aliased = encodePublish(delivery({ encodings }), false, 5, { alias: 1, isNew: false }, 0);
    assert.notDeepEqual(plain, withId);
    assert.notDeepEqual(plain, aliased);
    assert.ok(aliased.byteLength < plain.byteLength, 'a known alias replaces the topic');
  });
});

describe('OutboundAliases', () => {
  it('assigns aliases to the first topics up to the maximum and reuses them once remembered', () => {
    const aliases = new OutboundAliases();
    aliases.maximum = 1;
    assert.deepEqual(aliases.lookup('a'), { alias: 1, isNew: true });
    assert.deepEqual(aliases.lookup('a'), { alias: 1, isNew: true }, 'not remembered until sent');
    aliases.remember('a', 1);
    assert.deepEqual(aliases.lookup('a'), { alias: 1, isNew: false });
    assert.equal(aliases.lookup('b'), undefined);
  });
});
