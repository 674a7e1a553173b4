import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { authorize } from './authorize.js';
import { dataTransfer } from './data-transfer.js';
import { handlerContext, memoryStore, type MemoryStore } from './handlers.spec-support.js';
import { heartbeat } from './heartbeat.js';
import { meterValues } from './meter-values.js';
import { statusNotification } from './status-notification.js';

describe('Heartbeat, StatusNotification, Authorize, MeterValues, DataTransfer', () => {
  let store: MemoryStore;
  before(async () => (store = await memoryStore()));
  after(() => store.close());

  it('Heartbeat answers the time and records the beat', async () => {
    const ctx = handlerContext(store, 'CP-1');
    assert.deepEqual(await heartbeat({}, ctx), { currentTime: '2026-06-01T12:00:00.000Z' });
    assert.notEqual((await store.ocpp.stations.get('CP-1'))?.lastHeartbeatAt, null);
  });

  it('StatusNotification keeps the latest status per connector', async () => {
    const ctx = handlerContext(store, 'CP-1');
    await statusNotification({ connectorId: 1, errorCode: 'NoError', status: 'Available' }, ctx);
    assert.deepEqual(
      await statusNotification(
        { connectorId: 1, errorCode: 'OtherError', status: 'Faulted', vendorErrorCode: 'E7' },
        ctx,
      ),
      {},
    );
    const [connector] = await store.ocpp.connectors.list('CP-1');
    assert.deepEqual([connector?.status, connector?.vendorErrorCode], ['Faulted', 'E7']);
  });

  it('Authorize: the idTagInfo of the store, expiry judged at the handler clock', async () => {
    await store.ocpp.idTags.create(
      { idTag: 'SOON', status: 'Accepted', parentIdTag: null, expiryDate: '2026-06-01T11:00:00.000Z' },
      'spec',
    );
    const ctx = handlerContext(store, 'CP-1');
    assert.deepEqual(await authorize({ idTag: 'SOON' }, ctx), {
      idTagInfo: { status: 'Expired', expiryDate: '2026-06-01T11:00:00.000Z' },
    });
  });

  it('MeterValues keeps every sampled value, with or without a transaction', async () => {
    const ctx = handlerContext(store, 'CP-m');
    const meterValue = [
      { timestamp: '2026-06-01T10:00:00Z', sampledValue: [{ value: '1' }, { value: '2', unit: 'W' }] },
    ];
    assert.deepEqual(await meterValues({ connectorId: 2, meterValue }, ctx), {});
    const kept = await store.ocpp.meterValues.list({ identity: 'CP-m', limit: 10 });
    assert.deepEqual(
      kept.map((v) => [v.connectorId, v.transactionId, v.value, v.unit]),
      [
        [2, null, '1', undefined],
        [2, null, '2', 'W'],
      ],
    );
  });

  it("MeterValues charges its sender its rows' share of the loop time their insert took", async () => {
    const charged = new Map<string, number>();
    const ctx = (identity: string) =>
      handlerContext(store, identity, {
        charge: (ms) => charged.set(identity, (charged.get(identity) ?? 0) + ms),
      });
    const values = (count: number) => [
      {
        timestamp: '2026-06-01T10:00:00Z',
        sampledValue: Array.from({ length: count }, (_, i) => ({ value: String(i) })),
      },
    ];
    // One tick: both calls' rows go in one group commit, whose time is shared out by rows (100 rows: a
    // call of more than 128 makes its rows over several turns, and so joins a later commit).
    await Promise.all([
      meterValues({ connectorId: 1, meterValue: values(1) }, ctx('CP-small')),
      meterValues({ connectorId: 1, meterValue: values(100) }, ctx('CP-large')),
    ]);
    const small = charged.get('CP-small') ?? 0;
    const large = charged.get('CP-large') ?? 0;
    assert.ok(small > 0, 'a row stored is loop time charged');
    assert.ok(Math.abs(large / small - 100) < 1e-6, `shared by rows: ${large} against ${small}`);
  });

  it('DataTransfer: UnknownVendorId', async () => {
    assert.deepEqual(await dataTransfer({ vendorId: 'x' }, handlerContext(store, 'CP-1')), {
      status: 'UnknownVendorId',
    });
  });
});
