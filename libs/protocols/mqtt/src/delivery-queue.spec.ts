import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryQueue } from './delivery-queue.js';
import { type Delivery } from './delivery.js';

function delivery(payload: string): Delivery {
  return {
    message: {
      topic: 't',
      payload: Buffer.from(payload),
      qos: 1,
      retain: false,
      publisherId: null,
      expiresAt: null,
      properties: {},
    },
    qos: 1,
    retain: false,
    subscriptionIds: [],
  };
}

const names = (list: readonly Delivery[]): string[] => list.map((d) => d.message.payload.toString());

describe('DeliveryQueue', () => {
  it('drops the oldest past the count bound', () => {
    const queue = new DeliveryQueue();
    const dropped = ['a', 'b', 'c', 'd'].flatMap((p) => queue.push(delivery(p), 3, 1000));
    assert.deepEqual(names(dropped), ['a']);
    assert.deepEqual(names([queue.shift(), queue.shift(), queue.shift()] as Delivery[]), ['b', 'c', 'd']);
    assert.equal(queue.bytes, 0);
  });

  it('drops the oldest past the byte bound, and a message bigger than the bound itself', () => {
    const queue = new DeliveryQueue();
    // Each costs its payload plus the 1-byte topic.
    queue.push(delivery('x'.repeat(4)), 10, 12);
    queue.push(delivery('y'.repeat(4)), 10, 12);
    assert.deepEqual(names(queue.push(delivery('z'.repeat(4)), 10, 12)), ['xxxx']);
    assert.equal(queue.bytes, 10);
    assert.deepEqual(names(queue.push(delivery('w'.repeat(20)), 10, 12)), ['w'.repeat(20)]);
    assert.equal(queue.length, 2);
  });

  it('a zero count bound queues nothing', () => {
    const queue = new DeliveryQueue();
    assert.deepEqual(names(queue.push(delivery('a'), 0, 1000)), ['a']);
    assert.equal(queue.length, 0);
  });
});
