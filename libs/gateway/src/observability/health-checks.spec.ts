import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HealthChecks } from './health-checks.js';
import { shortMessage } from './service-outcomes.js';

/** Lets the checks started in the background end. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('HealthChecks: the last outcome of each service', () => {
  it('starts one check when read, and no other while the last is fresher than the age asked', async () => {
    const checks = new HealthChecks();
    let calls = 0;
    checks.add('store', { kind: 'sqlite', check: async () => void calls++ });
    assert.deepEqual(checks.status('store', 60_000), {
      kind: 'sqlite',
      up: null,
      checkedAt: null,
      lastError: null,
    });
    await settle();
    const status = checks.status('store', 60_000);
    assert.equal(status?.up, true);
    assert.equal(typeof status?.checkedAt, 'number');
    for (let i = 0; i < 5; i++) checks.status('store', 60_000);
    await settle();
    assert.equal(calls, 1);
    // Past the age: one more.
    checks.status('store', 0);
    checks.status('store', 0);
    await settle();
    assert.equal(calls, 2);
    assert.equal(checks.status('nats', 0), null);
  });

  it('keeps the last failure, its first line without URL credentials, after the service is back', async () => {
    const checks = new HealthChecks();
    let fail = true;
    checks.add('store', {
      check: async () => {
        if (fail) throw new Error('connect ECONNREFUSED postgres://broker:hunter2@db:5432/x\n    at stack');
      },
    });
    assert.deepEqual(await checks.report(), { store: 'down' });
    const down = checks.status('store', 60_000);
    assert.equal(down?.up, false);
    assert.equal(down?.kind, null);
    assert.equal(down?.lastError?.message, 'connect ECONNREFUSED postgres://db:5432/x');
    fail = false;
    assert.deepEqual(await checks.report(), { store: 'up' });
    const up = checks.status('store', 60_000);
    assert.equal(up?.up, true);
    assert.deepEqual(up?.lastError, down?.lastError);
  });

  it('shortens a long message', () => {
    assert.equal(shortMessage(new Error('x'.repeat(500))), `${'x'.repeat(200)}…`);
    assert.equal(shortMessage('plain'), 'plain');
  });

  it('drops URL credentials up to the last @ before the host, an @ in the password too', () => {
    assert.equal(
      shortMessage('connect postgres://broker:p@ss@db:5432/x failed, see https://example.org/a@b'),
      'connect postgres://db:5432/x failed, see https://example.org/a@b',
    );
  });
});
