import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeAlarms, type AlarmReading } from './alarm-check.js';

const quiet: AlarmReading = { natsConnected: true, refusals: 100, dropped: 7, nodesGone: [], at: 10_000 };

describe('activeAlarms', () => {
  it('raises nothing on a quiet broker, and nothing but NATS at the first check', () => {
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, refusals: 101, at: 15_000 })], []);
    assert.deepEqual(
      [...activeAlarms(null, { ...quiet, refusals: 1e6, natsConnected: false })],
      ['nats-unreachable'],
    );
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, natsConnected: null, at: 15_000 })], []);
  });

  it('raises a refusal surge from 20 a second, and shedding on any drop since the last check', () => {
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, refusals: 199, at: 15_000 })], []);
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, refusals: 200, at: 15_000 })], ['refusal-surge']);
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, dropped: 8, at: 15_000 })], ['shedding']);
  });

  it('holds node-gone while a node whose heartbeats timed out is not back, from the first check', () => {
    assert.deepEqual([...activeAlarms(null, { ...quiet, nodesGone: ['n2'] })], ['node-gone']);
    assert.deepEqual([...activeAlarms(quiet, { ...quiet, nodesGone: [], at: 15_000 })], []);
  });
});
