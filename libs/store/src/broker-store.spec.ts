import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BrokerStore } from './broker-store.js';

describe('BrokerStore.close', () => {
  it('runs every beforeClose write to its end on an open database, then rejects with the first failure', async () => {
    const store = await BrokerStore.open({ sqlitePath: ':memory:' });
    const done: string[] = [];
    store.beforeClose(async () => {
      done.push('failed');
      throw new Error('first failure');
    });
    store.beforeClose(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      await store.ping();
      done.push('written');
    });
    await assert.rejects(store.close(), /first failure/);
    assert.deepEqual(done, ['failed', 'written']);
    await assert.rejects(store.ping(), 'the database is closed once the writes are done');
  });
});
