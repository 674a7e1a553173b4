import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TraceRecord, type TraceSink } from '#broker/gateway';
import { TraceTaps } from './trace-taps.js';

function sink(): TraceSink & { records: TraceRecord[] } {
  const records: TraceRecord[] = [];
  return { records, write: (record) => records.push(record) };
}

function record(event: string, client: string | null, topic: string | null): TraceRecord {
  return { event, client, topic, qos: 0, packetId: null, bytes: 1, outcome: 'sent', reason: null };
}

const events = (s: { records: TraceRecord[] }) => s.records.map((r) => `${r.event} ${r.client} ${r.topic}`);

describe('TraceTaps', () => {
  it('is active only while something is followed', () => {
    const taps = new TraceTaps();
    assert.equal(taps.active, false);
    const stopClient = taps.followClient('a', sink());
    const stopTopics = taps.followTopics('t/#', sink());
    assert.equal(taps.active, true);
    assert.deepEqual([taps.followsClient('a'), taps.followsClient('b')], [true, false]);
    stopClient();
    assert.equal(taps.followsClient('a'), false);
    assert.equal(taps.active, true);
    stopTopics();
    assert.equal(taps.active, false);
  });

  it("writes a client's own packets to its client's traces only", () => {
    const taps = new TraceTaps();
    const a = sink();
    const topics = sink();
    taps.followClient('a', a);
    taps.followTopics('#', topics);
    taps.client(record('connect', 'a', null));
    taps.client(record('connect', 'b', null));
    taps.client(record('subscribe', 'a', 't/1'));
    assert.deepEqual(events(a), ['connect a null', 'subscribe a t/1']);
    assert.deepEqual(topics.records, []);
  });

  it("writes a message to its client's, its publisher's and its matching filters' traces, once each", () => {
    const taps = new TraceTaps();
    const receiver = sink();
    const publisher = sink();
    const sensors = sink();
    const other = sink();
    taps.followClient('rx', receiver);
    taps.followClient('tx', publisher);
    taps.followTopics('sensors/+/temp', sensors);
    taps.followTopics('sensors/#', sensors);
    taps.followTopics('other/#', other);
    taps.message(record('delivered', 'rx', 'sensors/1/temp'), 'tx');
    taps.message(record('publish-in', 'tx', 'sensors/2/hum'), 'tx');
    taps.message(record('delivered', 'zz', '$SYS/x'), null);
    assert.deepEqual(events(receiver), ['delivered rx sensors/1/temp']);
    assert.deepEqual(events(publisher), ['delivered rx sensors/1/temp', 'publish-in tx sensors/2/hum']);
    assert.deepEqual(events(sensors), ['delivered rx sensors/1/temp', 'publish-in tx sensors/2/hum']);
    assert.deepEqual(other.records, []);
  });

  it('two traces of one client both get its packets, and stopping one leaves the other', () => {
    const taps = new TraceTaps();
    const first = sink();
    const second = sink();
    const stopFirst = taps.followClient('a', first);
    taps.followClient('a', second);
    taps.client(record('connect', 'a', null));
    stopFirst();
    taps.client(record('disconnect', 'a', null));
    assert.deepEqual(events(first), ['connect a null']);
    assert.deepEqual(events(second), ['connect a null', 'disconnect a null']);
    assert.equal(taps.active, true);
  });

  it("a wildcard filter does not follow '$' topics, as MQTT subscriptions do not", () => {
    const taps = new TraceTaps();
    const all = sink();
    taps.followTopics('#', all);
    taps.message(record('publish-in', 'a', '$SYS/broker/uptime'), 'a');
    taps.message(record('publish-in', 'a', 'x'), 'a');
    assert.deepEqual(events(all), ['publish-in a x']);
  });
});
