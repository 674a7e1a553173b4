import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type DashboardLookup, DashboardLookups, type LookupResult } from './dashboard-lookups.js';

function lookup(id: string, title = 'Device', keyLabel = 'Serial'): DashboardLookup {
  return {
    id,
    title,
    keyLabel,
    find: (): Promise<LookupResult> => Promise.resolve({ found: false, missing: [] }),
    act: () => Promise.resolve('not-found'),
  };
}

describe('DashboardLookups', () => {
  it('lists id, title and key label of each, in the order they were added', () => {
    const lookups = new DashboardLookups();
    lookups.add(lookup('device', 'Device', 'Serial number'));
    lookups.add(lookup('session', 'Session', 'Client id'));
    assert.deepEqual(lookups.list(), [
      { id: 'device', title: 'Device', keyLabel: 'Serial number' },
      { id: 'session', title: 'Session', keyLabel: 'Client id' },
    ]);
  });

  it('gives the lookup by its id, and nothing for an id none has', () => {
    const lookups = new DashboardLookups();
    const device = lookup('device');
    lookups.add(device);
    assert.equal(lookups.get('device'), device);
    assert.equal(lookups.get('other'), undefined);
    // Not a key of Object.prototype either.
    assert.equal(lookups.get('constructor'), undefined);
  });

  it('refuses a second lookup with an id already there, keeping the first', () => {
    const lookups = new DashboardLookups();
    const first = lookup('device', 'First');
    lookups.add(first);
    assert.throws(
      () => lookups.add(lookup('device', 'Second')),
      /a dashboard lookup device is already there/,
    );
    assert.equal(lookups.get('device'), first);
    assert.equal(lookups.list().length, 1);
  });

  it('refuses an id that cannot be a path segment of its routes', () => {
    const lookups = new DashboardLookups();
    for (const id of ['', 'Device', 'a/b', 'a b', '-x', 'x'.repeat(65), 'dé']) {
      assert.throws(() => lookups.add(lookup(id)), /must be a-z, 0-9/, JSON.stringify(id));
    }
    lookups.add(lookup('x'.repeat(64)));
    lookups.add(lookup('device-session.v2'));
    assert.equal(lookups.list().length, 2);
  });

  it('starts empty', () => {
    assert.deepEqual(new DashboardLookups().list(), []);
  });
});
