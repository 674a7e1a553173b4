import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type DashboardTrace, DashboardTraces } from './dashboard-traces.js';

function kind(id: string, title = 'Client', keyLabel = 'Client id'): DashboardTrace {
  return { id, title, keyLabel, invalid: () => null, follow: () => () => undefined };
}

describe('DashboardTraces', () => {
  it('lists id, title and key label of each, in the order they were added, and gives each by its id', () => {
    const traces = new DashboardTraces();
    const client = kind('client', 'Client', 'Client id');
    traces.add(client);
    traces.add(kind('topic', 'Topic', 'Topic filter'));
    assert.deepEqual(traces.list(), [
      { id: 'client', title: 'Client', keyLabel: 'Client id' },
      { id: 'topic', title: 'Topic', keyLabel: 'Topic filter' },
    ]);
    assert.equal(traces.get('client'), client);
    assert.equal(traces.get('nothing'), undefined);
  });

  it('refuses a second kind with the same id, and an id that is no path segment', () => {
    const traces = new DashboardTraces();
    traces.add(kind('client'));
    assert.throws(() => traces.add(kind('client')), /already there/);
    assert.throws(() => traces.add(kind('Client')), /a-z, 0-9/);
    assert.throws(() => traces.add(kind('a/b')), /a-z, 0-9/);
  });
});
