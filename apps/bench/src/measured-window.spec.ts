import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MeasuredWindow } from './measured-window.js';

describe('MeasuredWindow', () => {
  it('runs the start hook, then the end hook before `ended`, and stops issuing at the end', async () => {
    const calls: string[] = [];
    let measured: MeasuredWindow | undefined;
    await new Promise<void>((resolve) => {
      measured = new MeasuredWindow(
        {
          warmupMs: 5,
          durationMs: 20,
          onWindowStart: () => calls.push('start'),
          onWindowEnd: () => calls.push(`end issuing=${String(measured?.issuing)}`),
        },
        () => {
          calls.push(`ended issuing=${String(measured?.issuing)}`);
          resolve();
        },
      );
      assert.equal(measured.issuing, true);
    });
    assert.deepEqual(calls, ['start', 'end issuing=true', 'ended issuing=false']);
  });

  it('counts only completions between its start and end', () => {
    const measured = new MeasuredWindow({ warmupMs: 1000, durationMs: 1000 });
    measured.cancel();
    assert.equal(measured.issuing, false);
    assert.equal(measured.contains(measured.start - 1), false);
    assert.equal(measured.contains(measured.start), true);
    assert.equal(measured.contains(measured.end), false);
  });
});
