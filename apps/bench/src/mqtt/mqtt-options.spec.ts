import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../cli-options.js';
import { parseMqttOptions } from './mqtt-options.js';

describe('parseMqttOptions', () => {
  it('has the documented defaults', () => {
    assert.deepEqual(parseMqttOptions([]), {
      rounds: 3,
      warmupMs: 1000,
      durationMs: 4000,
      publishers: 10,
      fanout: 1000,
      window: 50,
      fanoutWindow: 5,
      idleConnections: 10000,
      settleMs: 3000,
      clientWrites: 'tick',
    });
  });

  it('reads flags, returns null for --help and refuses nonsense', () => {
    assert.equal(parseMqttOptions(['--fanout', '20', '--settle', '0.5'])?.fanout, 20);
    assert.equal(parseMqttOptions(['--help']), null);
    assert.throws(() => parseMqttOptions(['--rounds', '0']), UsageError);
    assert.throws(() => parseMqttOptions(['--bogus']), UsageError);
    assert.equal(parseMqttOptions(['--client-writes', 'message'])?.clientWrites, 'message');
    assert.throws(() => parseMqttOptions(['--client-writes', 'turn']), UsageError);
  });
});
