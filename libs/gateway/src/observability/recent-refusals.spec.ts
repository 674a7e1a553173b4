import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RecentRefusals } from './recent-refusals.js';

const refusal = (status: number, title = 'Bad', detail = 'why') => ({
  at: status,
  status,
  endpoint: '/x',
  title,
  detail,
});

describe('RecentRefusals', () => {
  it('lists the refusals newest first', () => {
    const recent = new RecentRefusals(3);
    recent.add(refusal(400));
    recent.add(refusal(401));
    assert.deepEqual(
      recent.latest().map((r) => r.status),
      [401, 400],
    );
    assert.equal(recent.total, 2);
  });

  it('keeps only the last `capacity`, and counts every one', () => {
    const recent = new RecentRefusals(3);
    for (const status of [400, 401, 403, 426, 429]) recent.add(refusal(status));
    assert.deepEqual(
      recent.latest().map((r) => r.status),
      [429, 426, 403],
    );
    assert.equal(recent.total, 5);
  });

  it('cuts a long detail', () => {
    const recent = new RecentRefusals(1);
    recent.add(refusal(400, 'Bad path', 'x'.repeat(5000)));
    assert.equal(recent.latest()[0]?.detail, `${'x'.repeat(200)}…`);
  });
});
