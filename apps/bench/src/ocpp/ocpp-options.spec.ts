import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../cli-options.js';
import { parseOcppOptions } from './ocpp-options.js';

describe('parseOcppOptions', () => {
  it('has the documented defaults and reads flags', () => {
    assert.deepEqual(parseOcppOptions([]), {
      rounds: 3,
      warmupMs: 1000,
      durationMs: 5000,
      chargePoints: 1000,
      servers: ['broker', 'ocpp-rpc', 'ocpp-rpc+sqlite'],
    });
    assert.equal(parseOcppOptions(['--charge-points', '10'])?.chargePoints, 10);
    assert.deepEqual(parseOcppOptions(['--stored-reference', 'no'])?.servers, ['broker', 'ocpp-rpc']);
    assert.equal(parseOcppOptions(['--help']), null);
  });

  it('refuses nonsense', () => {
    assert.throws(() => parseOcppOptions(['--charge-points', '0']), UsageError);
    assert.throws(() => parseOcppOptions(['--duration', 'x']), UsageError);
    assert.throws(() => parseOcppOptions(['--stored-reference', 'maybe']), UsageError);
  });
});
