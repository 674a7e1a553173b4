import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallQueueFullError, CallTimeoutError, CallTracker, ConnectionClosedError } from './call-tracker.js';
import { ManualClock } from '#broker/kit';

function tracker(options: { maxQueued?: number; failSend?: boolean } = {}) {
  const sent: [string, string, unknown][] = [];
  const clock = new ManualClock();
  let next = 0;
  const t = new CallTracker({
    timeoutMs: 1000,
    maxQueued: options.maxQueued ?? 8,
    newId: () => `id-${++next}`,
    clock,
    send: (id, action, payload) => {
      if (options.failSend) throw new Error('socket gone');
      sent.push([id, action, payload]);
    },
  });
  return { t, sent, clock };
}

describe('CallTracker', () => {
  it('keeps one CALL outstanding and sends the next when it is answered', async () => {
    const { t, sent } = tracker();
    const first = t.call('Reset', { type: 'Soft' });
    const second = t.call('ClearCache', {});
    assert.deepEqual(sent, [['id-1', 'Reset', { type: 'Soft' }]]);
    assert.equal(t.queued, 1);
    t.take('id-1')?.resolve({ status: 'Accepted' });
    assert.deepEqual(await first, { status: 'Accepted' });
    assert.deepEqual(
      sent.map(([id]) => id),
      ['id-1', 'id-2'],
    );
    t.take('id-2')?.resolve({ status: 'Rejected' });
    assert.deepEqual(await second, { status: 'Rejected' });
    assert.equal(t.outstanding, null);
  });

  it('an answer for any other id than the outstanding one is not taken', () => {
    const { t } = tracker();
    void t.call('Reset', { type: 'Soft' });
    void t.call('ClearCache', {});
    assert.equal(t.take('id-2'), null, 'queued, not sent yet');
    assert.equal(t.take('made-up'), null);
    assert.equal(t.outstanding, 'id-1');
  });

  it('times out the outstanding call and sends the next; a late answer is then unknown', async () => {
    const { t, sent, clock } = tracker();
    const first = t.call('Reset', { type: 'Soft' });
    clock.advance(500);
    const second = t.call('ClearCache', {});
    clock.advance(500);
    await assert.rejects(first, CallTimeoutError);
    assert.equal(t.outstanding, 'id-2');
    assert.equal(t.take('id-1'), null);
    t.take('id-2')?.resolve({});
    assert.deepEqual(await second, {});
    assert.equal(sent.length, 2);
  });

  it('the timeout counts from the call, so a queued call can expire without ever being sent', async () => {
    const { t, sent, clock } = tracker();
    const first = t.call('Reset', { type: 'Soft' });
    clock.advance(500);
    const second = t.call('ClearCache', {});
    clock.advance(500);
    await assert.rejects(first, CallTimeoutError);
    t.take('id-2')?.resolve({});
    await second;
    const third = t.call('ClearCache', {});
    const fourth = t.call('ClearCache', {});
    clock.advance(1000);
    await assert.rejects(third, CallTimeoutError);
    await assert.rejects(fourth, CallTimeoutError);
    assert.deepEqual(
      sent.map(([id]) => id),
      ['id-1', 'id-2', 'id-3', 'id-4'],
    );
  });

  it('refuses a call when the queue behind the outstanding one is full', async () => {
    const { t } = tracker({ maxQueued: 1 });
    void t.call('A', {});
    void t.call('B', {});
    await assert.rejects(t.call('C', {}), CallQueueFullError);
  });

  it('close rejects the outstanding and the queued calls, and any later one', async () => {
    const { t } = tracker();
    const calls = [t.call('A', {}), t.call('B', {})];
    t.close(new ConnectionClosedError('gone'));
    for (const call of calls) await assert.rejects(call, ConnectionClosedError);
    await assert.rejects(t.call('C', {}), ConnectionClosedError);
  });

  it('a send that throws fails that call only', async () => {
    const { t } = tracker({ failSend: true });
    await assert.rejects(t.call('A', {}), /socket gone/);
    assert.equal(t.outstanding, null);
  });
});
