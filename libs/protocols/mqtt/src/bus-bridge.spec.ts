import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BUS_ORIGIN, fromBus } from './bus-bridge.js';

const payload = new Uint8Array([1, 2]);

describe('fromBus', () => {
  it("takes another node's MQTT message with its QoS and, when given, its publisher's client id", () => {
    const traced = fromBus({
      topic: 'a/b',
      payload,
      origin: BUS_ORIGIN,
      node: 'n2',
      flags: 1,
      sender: 'dev-1',
    });
    assert.deepEqual([traced.qos, traced.publisherId, traced.retain], [1, 'dev-1', false]);
    const plain = fromBus({ topic: 'a/b', payload, origin: BUS_ORIGIN, node: 'n2', flags: 0 });
    assert.equal(plain.publisherId, null);
  });

  it("reads nothing of another module's flags or sender: QoS 0, from no client", () => {
    const other = fromBus({ topic: 'a/b', payload, origin: 'chat.v1', flags: 2, sender: 'someone' });
    assert.deepEqual([other.qos, other.publisherId, other.stored], [0, null, undefined]);
  });
});
