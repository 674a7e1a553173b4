import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InMemoryTopicBus, InvalidTopicError, type BusMessage } from '#broker/bus';
import { BusEventStream } from './bus-event-stream.js';

function message(topic: string, text = 'x'): BusMessage {
  return { topic, payload: Buffer.from(text), origin: 'test' };
}

describe('BusEventStream', () => {
  it('yields matching messages in order, queued or awaited', async () => {
    const bus = new InMemoryTopicBus();
    const stream = new BusEventStream(bus, 'sensors/+/temp', 10);
    bus.publish(message('sensors/a/temp', '1'));
    bus.publish(message('sensors/a/humidity', 'no'));
    const first = await stream.next();
    assert.equal(first.done, false);
    assert.equal(Buffer.from(first.value?.message.payload ?? []).toString(), '1');
    assert.ok(first.value?.receivedAt instanceof Date);
    const waiting = stream.next();
    bus.publish(message('sensors/b/temp', '2'));
    assert.equal((await waiting).value?.message.topic, 'sensors/b/temp');
  });

  it('return() unsubscribes and ends a pending next()', async () => {
    const bus = new InMemoryTopicBus();
    const stream = new BusEventStream(bus, 'a/#', 10);
    const waiting = stream.next();
    await stream.return();
    assert.deepEqual(await waiting, { value: undefined, done: true });
    assert.equal(bus.publish(message('a/b')), 0);
    assert.deepEqual(await stream.next(), { value: undefined, done: true });
  });

  it('fails with a readable error once maxPending events wait, and stops listening', async () => {
    const bus = new InMemoryTopicBus();
    const stream = new BusEventStream(bus, 't', 3);
    for (let i = 0; i < 4; i++) bus.publish(message('t'));
    assert.equal(bus.publish(message('t')), 0);
    await assert.rejects(stream.next(), /more than 3 events waiting: the subscriber is too slow/);
    assert.deepEqual(await stream.next(), { value: undefined, done: true });
  });

  it('an invalid filter throws the bus error at creation', () => {
    assert.throws(() => new BusEventStream(new InMemoryTopicBus(), 'a/#/b', 3), InvalidTopicError);
  });
});
