import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type MeterValueInput, OcppRepositories } from '#broker/protocols/ocpp16';
import { BrokerStore, ConflictError, NotFoundError } from '#broker/store';
import { later, storeBackends } from './support/store-backends.js';

for (const backend of storeBackends) {
  describe(`OCPP store on ${backend.name}`, () => {
    let store: BrokerStore;
    let ocpp: OcppRepositories;
    let cleanup: () => Promise<void>;
    let config: { sqlitePath: string; databaseUrl?: string };

    before(async () => {
      ({ config, cleanup } = await backend.open());
      store = await BrokerStore.open(config);
      ocpp = await OcppRepositories.open(store);
    });
    after(async () => {
      await store.close();
      await cleanup();
    });

    it('OCPP: records boots and heartbeats of known and unknown charge points', async () => {
      assert.equal(await ocpp.stations.get('CP-boot'), null);
      ocpp.stations.recordHeartbeat('CP-beat');
      const booted = await ocpp.stations.recordBoot(
        'CP-boot',
        { vendor: 'Acme', model: 'Volt', firmwareVersion: '1.2' },
        'Accepted',
      );
      assert.deepEqual(
        [booted.vendor, booted.model, booted.serialNumber, booted.firmwareVersion, booted.bootStatus],
        ['Acme', 'Volt', null, '1.2', 'Accepted'],
      );
      ocpp.stations.recordHeartbeat('CP-boot');
      const again = await ocpp.stations.recordBoot('CP-boot', { vendor: 'Acme', model: 'Volt' }, 'Pending');
      assert.equal(again.bootStatus, 'Pending');
      assert.notEqual(again.lastHeartbeatAt, null, 'a new boot keeps the last heartbeat');
      assert.deepEqual(
        (await ocpp.stations.list()).map((s) => s.identity),
        ['CP-beat', 'CP-boot'],
      );
    });

    it('OCPP: last-seen times are seen at once and written behind, by flush or by closing the store', async () => {
      const identities = Array.from({ length: 30 }, (_, i) => `CP-group-${i}`);
      for (const identity of identities) ocpp.stations.recordHeartbeat(identity);
      ocpp.stations.recordHeartbeat('CP-group-0');
      const seen = await ocpp.stations.list();
      for (const identity of identities) {
        const station = seen.find((s) => s.identity === identity);
        assert.notEqual(station?.lastHeartbeatAt ?? null, null, identity);
      }
      assert.deepEqual(
        seen.map((s) => s.identity),
        [...seen.map((s) => s.identity)].sort(),
        'listed in identity order, unwritten ones among them',
      );
      await ocpp.stations.flush();
      const other = await BrokerStore.open(config);
      const otherOcpp = await OcppRepositories.open(other);
      try {
        const written = await otherOcpp.stations.get('CP-group-7');
        assert.equal(
          written?.lastHeartbeatAt,
          seen.find((s) => s.identity === 'CP-group-7')?.lastHeartbeatAt,
        );
        assert.equal(written?.bootStatus, null, 'a charge point that only beat has a row of its own');
        otherOcpp.stations.recordHeartbeat('CP-closing');
      } finally {
        await other.close();
      }
      assert.notEqual((await ocpp.stations.get('CP-closing'))?.lastHeartbeatAt ?? null, null);
    });

    it('OCPP: a last-seen time written behind never replaces a later one', async () => {
      const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
      ocpp.stations.recordHeartbeat('CP-late');
      await tick();
      const booted = await ocpp.stations.recordBoot('CP-late', { vendor: 'Acme', model: 'Volt' }, 'Accepted');
      await ocpp.stations.flush();
      const afterBoot = await ocpp.stations.get('CP-late');
      assert.equal(
        afterBoot?.updatedAt,
        booted.updatedAt,
        'the boot is later than the beat written after it',
      );
      // Another node (here a second store on the same database) writes a later beat first.
      ocpp.stations.recordHeartbeat('CP-late');
      const beatenHere = (await ocpp.stations.get('CP-late'))?.lastHeartbeatAt;
      await tick();
      const other = await BrokerStore.open(config);
      const otherOcpp = await OcppRepositories.open(other);
      try {
        otherOcpp.stations.recordHeartbeat('CP-late');
        await otherOcpp.stations.flush();
        const later = (await otherOcpp.stations.get('CP-late'))?.lastHeartbeatAt;
        assert.ok(later !== undefined && later !== null && beatenHere !== undefined && beatenHere !== null);
        assert.ok(later > beatenHere);
        await ocpp.stations.flush();
        assert.equal((await otherOcpp.stations.get('CP-late'))?.lastHeartbeatAt, later);
      } finally {
        await other.close();
      }
    });

    it('OCPP: meter values of one tick are group-committed; a bad call fails alone', async () => {
      const sample = (value: string) => [{ timestamp: later(0), sampledValue: [{ value }] }];
      const results = await Promise.allSettled([
        ocpp.meterValues.add('CP-group-1', 1, null, sample('1')),
        ocpp.meterValues.add('CP-group-2', 1, null, sample(null as unknown as string)),
        ocpp.meterValues.add('CP-group-3', 1, null, sample('3')),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      for (const [identity, expected] of [
        ['CP-group-1', ['1']],
        ['CP-group-2', []],
        ['CP-group-3', ['3']],
      ] as const) {
        const kept = await ocpp.meterValues.list({ identity, limit: 10 });
        assert.deepEqual(
          kept.map((v) => v.value),
          expected,
          identity,
        );
      }
    });

    it('OCPP: 1,000 sampled values are made a slice a turn, stored whole and in order; a small call meanwhile goes first', async () => {
      const meterValue: MeterValueInput[] = [0, 1].map((m) => ({
        timestamp: later(m),
        sampledValue: Array.from({ length: 500 }, (_, i) => ({
          value: String(m * 500 + i),
          unit: 'Wh',
          ...(i % 2 === 0 ? { measurand: 'Energy.Active.Import.Register' } : { phase: 'L1' }),
        })),
      }));
      const settled: string[] = [];
      const large = ocpp.meterValues.add('CP-large', 2, null, meterValue).then((stored) => {
        settled.push('large');
        return stored;
      });
      // Sent right behind it: its one row does not wait for the large call's thousand to be made.
      const small = ocpp.meterValues.add('CP-small', 1, null, [
        { timestamp: later(0), sampledValue: [{ value: 's' }] },
      ]);
      void small.then(() => settled.push('small'));
      const [stored] = await Promise.all([large, small]);
      assert.equal(stored.rows, 1000);
      assert.deepEqual(settled, ['small', 'large']);
      const kept = await ocpp.meterValues.list({ identity: 'CP-large', limit: 2000 });
      assert.deepEqual(
        kept.map((v) => [v.value, v.sampledAt, v.connectorId, v.measurand ?? null, v.phase ?? null, v.unit]),
        meterValue.flatMap((mv) =>
          mv.sampledValue.map((sv) => [
            sv.value,
            mv.timestamp,
            2,
            sv.measurand ?? null,
            sv.phase ?? null,
            'Wh',
          ]),
        ),
      );
    });

    it('OCPP: id tags with audit; authorize answers Invalid, Blocked, Expired, Accepted with parent', async () => {
      await ocpp.idTags.create(
        { idTag: 'TAG-1', status: 'Accepted', parentIdTag: 'GROUP', expiryDate: later(60_000) },
        'tester',
      );
      await ocpp.idTags.create(
        { idTag: 'TAG-old', status: 'Accepted', parentIdTag: null, expiryDate: later(-60_000) },
        'tester',
      );
      await assert.rejects(
        ocpp.idTags.create({ idTag: 'TAG-1', status: 'Blocked', parentIdTag: null, expiryDate: null }, 't'),
        ConflictError,
      );
      const accepted = await ocpp.idTags.authorize('TAG-1');
      assert.equal(accepted.status, 'Accepted');
      assert.equal(accepted.parentIdTag, 'GROUP');
      assert.equal((await ocpp.idTags.authorize('TAG-old')).status, 'Expired');
      assert.deepEqual(await ocpp.idTags.authorize('TAG-none'), { status: 'Invalid' });
      const blocked = await ocpp.idTags.update('TAG-1', { status: 'Blocked', parentIdTag: null }, 'tester');
      assert.deepEqual([blocked.status, blocked.parentIdTag], ['Blocked', null]);
      assert.equal((await ocpp.idTags.authorize('TAG-1')).status, 'Blocked');
      assert.deepEqual(
        (await ocpp.idTags.list({ limit: 1, after: 'TAG-1' })).map((t) => t.idTag),
        ['TAG-old'],
      );
      await ocpp.idTags.remove('TAG-1', 'tester');
      await assert.rejects(ocpp.idTags.get('TAG-1'), NotFoundError);
      await assert.rejects(ocpp.idTags.update('TAG-1', { status: 'Accepted' }, 'tester'), NotFoundError);
      const [removed, updated] = await store.audit.list({ limit: 2 });
      assert.deepEqual(
        [removed?.action, updated?.action, removed?.target],
        ['id-tag.remove', 'id-tag.update', 'TAG-1'],
      );
    });

    it('OCPP: connector status is one row per connector, replaced by the next notification', async () => {
      await ocpp.connectors.record('CP-c', {
        connectorId: 1,
        status: 'Available',
        errorCode: 'NoError',
      });
      await ocpp.connectors.record('CP-c', {
        connectorId: 0,
        status: 'Available',
        errorCode: 'NoError',
      });
      await ocpp.connectors.record('CP-c', {
        connectorId: 1,
        status: 'Faulted',
        errorCode: 'GroundFailure',
        info: 'leak',
        timestamp: '2026-01-01T00:00:00.000Z',
      });
      const connectors = await ocpp.connectors.list('CP-c');
      assert.deepEqual(
        connectors.map((c) => [c.connectorId, c.status, c.errorCode, c.info]),
        [
          [0, 'Available', 'NoError', null],
          [1, 'Faulted', 'GroundFailure', 'leak'],
        ],
      );
      assert.equal(connectors[1]?.statusAt, '2026-01-01T00:00:00.000Z');
    });

    it('OCPP: transactions get increasing ids, stop once, and keep their meter values in order', async () => {
      const first = await ocpp.transactions.start({
        identity: 'CP-t',
        connectorId: 1,
        idTag: 'TAG-t',
        startStatus: 'Accepted',
        meterStart: 100,
        startedAt: '2026-01-01T10:00:00.000Z',
      });
      const second = await ocpp.transactions.start({
        identity: 'CP-t',
        connectorId: 2,
        idTag: 'TAG-u',
        startStatus: 'Accepted',
        meterStart: 0,
        startedAt: '2026-01-01T10:01:00.000Z',
        reservationId: 7,
      });
      assert.ok(second.id > first.id);
      assert.equal(await ocpp.transactions.hasOngoing('TAG-t'), true);
      const resent = await ocpp.transactions.start({
        identity: 'CP-t',
        connectorId: 1,
        idTag: 'TAG-t',
        startStatus: 'ConcurrentTx',
        meterStart: 100,
        startedAt: '2026-01-01T10:00:00.000Z',
      });
      assert.deepEqual(
        [resent.id, resent.startStatus],
        [first.id, 'Accepted'],
        'a resent start is the same one',
      );
      await ocpp.transactions.start({
        identity: 'CP-v',
        connectorId: 3,
        idTag: 'TAG-v',
        startStatus: 'Invalid',
        meterStart: 0,
        startedAt: '2026-01-01T10:02:00.000Z',
      });
      assert.equal(await ocpp.transactions.hasOngoing('TAG-v'), false, 'a start refused holds no tag');
      const values = Array.from({ length: 450 }, (_, i) => ({
        value: String(i),
        measurand: 'Power.Active.Import',
      }));
      const stored = await ocpp.meterValues.add('CP-t', 1, first.id, [
        { timestamp: '2026-01-01T10:05:00.000Z', sampledValue: [{ value: '150', unit: 'Wh' }] },
        { timestamp: '2026-01-01T10:06:00.000Z', sampledValue: values },
      ]);
      assert.equal(stored.rows, 451);
      const listed = await ocpp.meterValues.list({ transactionId: first.id, limit: 1000 });
      assert.equal(listed.length, 451);
      assert.deepEqual([listed[0]?.value, listed[0]?.unit, listed[450]?.value], ['150', 'Wh', '449']);
      assert.equal(
        await ocpp.transactions.stop({
          identity: 'CP-other',
          id: first.id,
          meterStop: 1,
          stoppedAt: later(0),
        }),
        null,
        'another charge point cannot stop it',
      );
      const stopped = await ocpp.transactions.stop({
        identity: 'CP-t',
        id: first.id,
        meterStop: 900,
        stoppedAt: '2026-01-01T11:00:00.000Z',
        reason: 'Local',
      });
      assert.deepEqual([stopped?.meterStop, stopped?.stopReason], [900, 'Local']);
      assert.equal(
        await ocpp.transactions.stop({
          identity: 'CP-t',
          id: first.id,
          meterStop: 1,
          stoppedAt: later(0),
        }),
        null,
        'a stopped transaction stays stopped',
      );
      assert.equal(await ocpp.transactions.hasOngoing('TAG-t'), false);
      assert.deepEqual(
        (await ocpp.transactions.list({ identity: 'CP-t', ongoing: true, limit: 10 })).map((t) => t.id),
        [second.id],
      );
      assert.equal((await ocpp.transactions.get(second.id))?.reservationId, 7);
    });

    it('OCPP: authenticates charge points by identity and password bytes, with colons in the identity', async () => {
      await ocpp.chargePoints.create(
        { identity: 'CP:01', allowed: true, password: 'key-0123456789abcdef' },
        'tester',
      );
      await ocpp.chargePoints.create({ identity: 'CP-open', allowed: true, password: null }, 'tester');
      await assert.rejects(
        ocpp.chargePoints.create({ identity: 'CP:01', allowed: true, password: null }, 'tester'),
        ConflictError,
      );
      assert.equal(await ocpp.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdef')), 'ok');
      assert.equal(
        await ocpp.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdeF')),
        'bad-password',
      );
      assert.equal(await ocpp.chargePoints.authenticate('CP:01', null), 'bad-password');
      assert.equal(await ocpp.chargePoints.authenticate('CP-open', null), 'ok');
      assert.equal(
        await ocpp.chargePoints.authenticate('CP-open', null, { requirePassword: true }),
        'no-password',
      );
      assert.equal(await ocpp.chargePoints.authenticate('CP-none', null), 'unknown');
      const updated = await ocpp.chargePoints.update('CP:01', { allowed: false }, 'tester');
      assert.deepEqual([updated.allowed, updated.hasPassword], [false, true]);
      assert.equal(
        await ocpp.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdef')),
        'not-allowed',
      );
      await ocpp.chargePoints.remove('CP:01', 'tester');
      await assert.rejects(ocpp.chargePoints.get('CP:01'), NotFoundError);
    });

    it('OCPP: the module makes its own tables, and takes a database whose tables the broker made before', async () => {
      await ocpp.idTags.create(
        { idTag: 'TAG-kept', status: 'Accepted', parentIdTag: null, expiryDate: null },
        't',
      );
      await ocpp.chargePoints.create({ identity: 'CP-kept', allowed: true, password: null }, 't');
      // A database from before the module had its own migrations: the same tables, no record of the
      // module's migrations (the broker's own list recorded 0002_ocpp and 0004_id_tag_case instead, and
      // its 0001_init made charge_points).
      await sql`drop table ocpp16_migration`.execute(store.db);
      await sql`drop table ocpp16_migration_lock`.execute(store.db);
      const reopened = await OcppRepositories.open(store);
      assert.equal((await reopened.idTags.get('tag-KEPT')).status, 'Accepted', 'its rows are kept');
      assert.equal((await reopened.chargePoints.get('CP-kept')).allowed, true, 'its charge points are kept');
      const recorded = await sql<{ name: string }>`select name from ocpp16_migration order by name`.execute(
        store.db,
      );
      assert.deepEqual(
        recorded.rows.map((r) => r.name),
        ['0001_tables', '0002_id_tag_case', '0003_charge_points'],
      );
    });
  });
}
