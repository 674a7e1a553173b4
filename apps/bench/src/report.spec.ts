import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Summary, verdict } from './report.js';

const summary = (server: string, rate: number, errors = 0): Summary => ({
  server,
  rate,
  p50Ms: 1,
  p99Ms: 2,
  serverCpuUsPerOp: null,
  errors,
});

describe('verdict', () => {
  it('met at or above the target, not below', () => {
    assert.match(
      verdict(summary('ref', 100), summary('broker', 137), 'message', 1),
      /1\.37 × ref \(target ≥ 1\): met\.$/,
    );
    assert.match(verdict(summary('ref', 100), summary('broker', 90), 'message', 1), /: NOT met\.$/);
  });

  it('a run that counted errors, on either side, never reads as met', () => {
    assert.match(
      verdict(summary('ref', 100), summary('broker', 137, 6003), 'message', 1),
      /NOT met: the run counted 6003 errors/,
    );
    assert.match(
      verdict(summary('ref', 100, 2), summary('broker', 137), 'message', 1),
      /NOT met: the run counted 2 errors/,
    );
  });
});
