import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { handlerContext, memoryStore, type MemoryStore } from './handlers.spec-support.js';
import { startTransaction, stopTransaction } from './transactions.js';

const at = '2026-06-01T10:00:00.000Z';

describe('StartTransaction and StopTransaction', () => {
  let store: MemoryStore;
  before(async () => {
    store = await memoryStore();
    await store.ocpp.idTags.create(
      { idTag: 'TAG', status: 'Accepted', parentIdTag: null, expiryDate: null },
      'spec',
    );
  });
  after(() => store.close());

  it('issues a transaction id for any tag, with its idTagInfo; a tag already charging is ConcurrentTx', async () => {
    const ctx = handlerContext(store, 'CP-1');
    const first = await startTransaction(
      { connectorId: 1, idTag: 'TAG', meterStart: 10, timestamp: at },
      ctx,
    );
    assert.deepEqual(first['idTagInfo'], { status: 'Accepted' });
    const second = await startTransaction(
      { connectorId: 2, idTag: 'TAG', meterStart: 0, timestamp: at },
      ctx,
    );
    assert.deepEqual(second['idTagInfo'], { status: 'ConcurrentTx' });
    const stranger = await startTransaction(
      { connectorId: 3, idTag: 'WHO', meterStart: 0, timestamp: at },
      ctx,
    );
    assert.deepEqual(stranger['idTagInfo'], { status: 'Invalid' });
    const ids = [first, second, stranger].map((a) => a['transactionId'] as number);
    assert.equal(new Set(ids).size, 3);
    assert.equal((await store.ocpp.transactions.get(ids[2] as number))?.startStatus, 'Invalid');
  });

  it('stop: records the end and the transaction data; answers idTagInfo only when an idTag came', async () => {
    const ctx = handlerContext(store, 'CP-2');
    const { transactionId } = (await startTransaction(
      { connectorId: 4, idTag: 'X', meterStart: 5, timestamp: at },
      ctx,
    )) as { transactionId: number };
    const answer = await stopTransaction(
      {
        transactionId,
        meterStop: 50,
        timestamp: at,
        reason: 'Local',
        transactionData: [{ timestamp: at, sampledValue: [{ value: '50' }] }],
      },
      ctx,
    );
    assert.deepEqual(answer, {});
    const stored = await store.ocpp.transactions.get(transactionId);
    assert.deepEqual([stored?.meterStop, stored?.stopReason], [50, 'Local']);
    const values = await store.ocpp.meterValues.list({ transactionId, limit: 10 });
    assert.deepEqual(
      values.map((v) => [v.connectorId, v.value]),
      [[4, '50']],
    );
    const withTag = await stopTransaction({ transactionId, meterStop: 60, timestamp: at, idTag: 'TAG' }, ctx);
    assert.deepEqual(withTag, { idTagInfo: { status: 'Accepted' } });
    assert.equal(
      (await store.ocpp.transactions.get(transactionId))?.meterStop,
      50,
      'a stopped transaction stays as it ended',
    );
  });

  it("another charge point's transaction is not stopped, and its data is kept unattached", async () => {
    const owner = handlerContext(store, 'CP-owner');
    const { transactionId } = (await startTransaction(
      { connectorId: 1, idTag: 'Y', meterStart: 0, timestamp: at },
      owner,
    )) as { transactionId: number };
    const other = handlerContext(store, 'CP-other');
    await stopTransaction(
      {
        transactionId,
        meterStop: 1,
        timestamp: at,
        transactionData: [{ timestamp: at, sampledValue: [{ value: '1' }] }],
      },
      other,
    );
    assert.equal((await store.ocpp.transactions.get(transactionId))?.stoppedAt, null);
    const kept = await store.ocpp.meterValues.list({ identity: 'CP-other', limit: 10 });
    assert.deepEqual(
      kept.map((v) => v.transactionId),
      [null],
    );
  });
});
