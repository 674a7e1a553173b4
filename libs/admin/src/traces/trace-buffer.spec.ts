import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TraceRecord } from '#broker/gateway';
import { TraceBuffer } from './trace-buffer.js';

function record(n: number): TraceRecord {
  return {
    event: 'publish-in',
    client: 'c',
    topic: `t/${n}`,
    qos: 0,
    packetId: null,
    bytes: n,
    outcome: 'accepted',
    reason: null,
  };
}

const topics = (buffer: TraceBuffer, limit?: number) => buffer.newest(limit).map((k) => k.record.topic);

describe('TraceBuffer', () => {
  it('keeps records in the order written, with their time and sequence', () => {
    const buffer = new TraceBuffer(10, 100, 1000);
    assert.equal(buffer.add(record(1), 1000), true);
    assert.equal(buffer.add(record(2), 1001), true);
    assert.deepEqual(
      buffer.newest().map((k) => [k.atMs, k.seq, k.record.topic]),
      [
        [1000, 0, 't/1'],
        [1001, 1, 't/2'],
      ],
    );
    assert.equal(buffer.size, 2);
    assert.equal(buffer.overwritten, 0);
  });

  it('keeps the newest `capacity` records and counts the ones it overwrote', () => {
    const buffer = new TraceBuffer(3, 100, 0);
    for (let n = 1; n <= 5; n++) buffer.add(record(n), 0);
    assert.deepEqual(topics(buffer), ['t/3', 't/4', 't/5']);
    assert.equal(buffer.size, 3);
    assert.equal(buffer.overwritten, 2);
    assert.deepEqual(topics(buffer, 2), ['t/4', 't/5']);
    assert.deepEqual(topics(buffer, 10), ['t/3', 't/4', 't/5']);
  });

  it('takes at most a second of its rate at once and counts the excess as dropped', () => {
    const buffer = new TraceBuffer(100, 5, 0);
    const kept = [1, 2, 3, 4, 5, 6, 7].map((n) => buffer.add(record(n), 0));
    assert.deepEqual(kept, [true, true, true, true, true, false, false]);
    assert.equal(buffer.dropped, 2);
    assert.equal(buffer.size, 5);
  });

  it('refills with time at its rate, never past a second of it', () => {
    const buffer = new TraceBuffer(100, 5, 0);
    for (let n = 0; n < 5; n++) buffer.add(record(n), 0);
    assert.equal(buffer.add(record(5), 0), false);
    // 400 ms at 5 a second: two more.
    assert.equal(buffer.add(record(6), 400), true);
    assert.equal(buffer.add(record(7), 400), true);
    assert.equal(buffer.add(record(8), 400), false);
    // A long quiet time gives one second's worth, not more.
    const later = [1, 2, 3, 4, 5, 6].map(() => buffer.add(record(9), 60_000));
    assert.deepEqual(later, [true, true, true, true, true, false]);
    assert.equal(buffer.dropped, 3);
  });

  it('a clock going back refills nothing and breaks nothing', () => {
    const buffer = new TraceBuffer(10, 1, 5000);
    assert.equal(buffer.add(record(1), 5000), true);
    assert.equal(buffer.add(record(2), 4000), false);
    assert.equal(buffer.add(record(3), 6000), true);
  });
});
