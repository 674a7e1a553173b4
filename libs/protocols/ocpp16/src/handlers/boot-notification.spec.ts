import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bootNotification } from './boot-notification.js';
import { handlerContext, memoryStore, type MemoryStore, SETTINGS } from './handlers.spec-support.js';

const BOOT = {
  chargePointVendor: 'Acme',
  chargePointModel: 'Volt',
  chargeBoxSerialNumber: 'SN-1',
  firmwareVersion: '1.0',
};

describe('BootNotification', () => {
  let store: MemoryStore;
  before(async () => (store = await memoryStore()));
  after(() => store.close());

  it('accept: Accepted with the heartbeat interval; the charge point is recorded and accepted', async () => {
    const ctx = handlerContext(store, 'CP-1', { accepted: false });
    assert.deepEqual(await bootNotification(BOOT, ctx), {
      status: 'Accepted',
      currentTime: '2026-06-01T12:00:00.000Z',
      interval: 300,
    });
    assert.equal(ctx.accepted, true);
    const station = await store.ocpp.stations.get('CP-1');
    assert.deepEqual(
      [station?.vendor, station?.serialNumber, station?.firmwareVersion, station?.bootStatus],
      ['Acme', 'SN-1', '1.0', 'Accepted'],
    );
  });

  for (const [bootPolicy, status] of [
    ['pending-unknown', 'Pending'],
    ['reject-unknown', 'Rejected'],
  ] as const) {
    it(`${bootPolicy}: ${status} with the retry interval for an unknown charge point, Accepted for a known one`, async () => {
      const settings = { ...SETTINGS, bootPolicy };
      const unknown = handlerContext(store, `CP-${status}`, { settings, accepted: true });
      const answer = await bootNotification(BOOT, unknown);
      assert.deepEqual([answer['status'], answer['interval']], [status, 60]);
      assert.equal(unknown.accepted, false, 'a new boot that is not accepted withdraws the acceptance');
      assert.equal((await store.ocpp.stations.get(`CP-${status}`))?.bootStatus, status);
      const known = handlerContext(store, 'CP-known', { settings, isKnown: async () => true });
      assert.equal((await bootNotification(BOOT, known))['status'], 'Accepted');
    });
  }
});
