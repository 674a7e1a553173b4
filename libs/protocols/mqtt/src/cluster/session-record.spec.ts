import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRecord, stateOf } from './session-record.js';

const BASE = { node: 'n1', incarnation: 'i', claim: 'c', expirySec: 60, keepAliveSec: 0, subscriptions: [] };

function parsed(extra: Record<string, unknown>) {
  const record = parseRecord(Buffer.from(JSON.stringify({ ...BASE, ...extra })));
  assert.ok(record !== null);
  return stateOf(record);
}

describe('session records: the stream knowledge a session hands over', () => {
  it("keeps each consumer's highest sequence and the received QoS 2 sequences", () => {
    const state = parsed({ streamDelivered: { mq_abc: 557, 'mq_d-e_f': 9 }, streamReceived: [555, 556] });
    assert.deepEqual(state.streamDelivered, { mq_abc: 557, 'mq_d-e_f': 9 });
    assert.deepEqual(state.streamReceived, [555, 556]);
  });

  it('drops what is not a consumer name or a positive sequence, and reads a record without them as before', () => {
    const state = parsed({
      streamDelivered: { mq_ok: 3, 'not a consumer': 4, mq_neg: -1, mq_float: 1.5 },
      streamReceived: [1, '2', -3, 4.5, 5],
    });
    assert.deepEqual(state.streamDelivered, { mq_ok: 3 });
    assert.deepEqual(state.streamReceived, [1, 5]);
    assert.deepEqual(parsed({ streamDelivered: 'mq_x', streamReceived: {} }).streamDelivered, undefined);
    const old = parsed({});
    assert.equal('streamDelivered' in old, false);
    assert.equal('streamReceived' in old, false);
  });

  it('keeps when each received message was stored beside its sequence, 0 where the record does not say', () => {
    const state = parsed({ streamReceived: [555, 'x', 556, 557], streamReceivedAt: [1000, 5, -1] });
    assert.deepEqual(state.streamReceived, [555, 556, 557]);
    assert.deepEqual(state.streamReceivedAt, [1000, 0, 0]);
    assert.deepEqual(parsed({ streamReceived: [9] }).streamReceivedAt, [0]);
  });

  it('keeps the unconfirmed receipts that are among the received ones, and only those', () => {
    const state = parsed({ streamReceived: [5, 6, 7], streamUnconfirmed: [5, 8, 'x', 7] });
    assert.deepEqual(state.streamUnconfirmed, [5, 7]);
    assert.equal('streamUnconfirmed' in parsed({ streamReceived: [5], streamUnconfirmed: 'x' }), false);
  });
});
