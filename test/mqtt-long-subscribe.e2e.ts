import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TestBroker } from './support/test-broker.js';
import { connect, Inbox, startMqttBroker } from './support/mqtt-helpers.js';

/** More filters than one turn of the broker's loop handles (FILTERS_PER_TURN, 50): ten turns. */
const FILTERS = 500;

describe('mqtt module: a SUBSCRIBE of 500 filters, handled a slice per turn', { timeout: 60_000 }, () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startMqttBroker({ maxSubscriptionsPerClient: 1000 });
  });
  after(() => broker.close());

  it('gets one code per filter in order, the retained messages, and a PUBLISH sent behind it meets them', async () => {
    const retainer = await connect(broker);
    const kept = [0, 49, 50, 251, FILTERS - 1];
    for (const i of kept) await retainer.publishAsync(`long/${i}/v`, `kept ${i}`, { qos: 1, retain: true });
    const sub = await connect(broker);
    const inbox = new Inbox(sub);
    const qosOf = (i: number): 0 | 1 | 2 => (i % 3) as 0 | 1 | 2;
    const subscribed = sub.subscribeAsync(
      Object.fromEntries(Array.from({ length: FILTERS }, (_, i) => [`long/${i}/+`, { qos: qosOf(i) }])),
    );
    // Written right behind the SUBSCRIBE, without waiting for its SUBACK: it must not overtake it.
    const published = sub.publishAsync(`long/${FILTERS - 1}/v`, 'live', { qos: 1 });
    const granted = await subscribed;
    assert.deepEqual(
      granted.map((g) => [g.topic, g.qos]),
      Array.from({ length: FILTERS }, (_, i) => [`long/${i}/+`, qosOf(i)]),
    );
    await published;
    const received = await inbox.wait(kept.length + 1);
    assert.deepEqual(received.map((m) => m.payload).sort(), [...kept.map((i) => `kept ${i}`), 'live'].sort());
    assert.equal(received.find((m) => m.payload === 'live')?.packet.retain, false);
    await Promise.all([retainer.endAsync(), sub.endAsync()]);
  });
});
