import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { BrokerStore, ConflictError, NotFoundError } from '#broker/store';
import { CredentialError } from '#broker/handshake';
import { createTestSchema } from './support/postgres.js';
import { later, storeBackends } from './support/store-backends.js';

for (const backend of storeBackends) {
  describe(`store on ${backend.name}`, () => {
    let store: BrokerStore;
    let cleanup: () => Promise<void>;
    let config: { sqlitePath: string; databaseUrl?: string };

    before(async () => {
      ({ config, cleanup } = await backend.open());
      store = await BrokerStore.open(config);
    });
    after(async () => {
      await store.close();
      await cleanup();
    });

    it('creates its schema on first start and reopens without migrating again', async () => {
      const again = await BrokerStore.open(config);
      await again.close();
      assert.deepEqual(await store.origins.list(), []);
    });

    it('adds, lists and removes origin entries, global and per endpoint; a duplicate is a conflict', async () => {
      const global = await store.origins.add({ endpoint: null, origin: 'https://a.example' }, 'tester');
      const own = await store.origins.add({ endpoint: '/chat', origin: 'https://a.example' }, 'tester');
      await assert.rejects(
        store.origins.add({ endpoint: '/chat', origin: 'https://a.example' }, 'tester'),
        ConflictError,
      );
      assert.deepEqual(
        (await store.origins.list(null)).map((e) => e.id),
        [global.id],
      );
      assert.deepEqual(
        (await store.origins.list('/chat')).map((e) => e.origin),
        ['https://a.example'],
      );
      assert.equal(global.endpoint, null);
      await store.origins.remove(own.id, 'tester');
      await store.origins.remove(global.id, 'tester');
      await assert.rejects(store.origins.remove(global.id, 'tester'), NotFoundError);
      assert.deepEqual(await store.origins.list(), []);
    });

    it('tells listeners about origin changes', async () => {
      let changes = 0;
      store.origins.onChange(() => changes++);
      const entry = await store.origins.add({ endpoint: null, origin: 'https://b.example' }, 'tester');
      await store.origins.remove(entry.id, 'tester');
      assert.equal(changes, 2);
    });

    it('verifies a created token, keeps only its hash, and refuses it once revoked or expired', async () => {
      const { credential, token } = await store.credentials.createToken(
        { name: 'svc', scopes: ['endpoint:/chat'], expiresAt: null },
        'tester',
      );
      assert.match(token, /^wsb_[A-Za-z0-9_-]{43}$/);
      const stored = await store.db
        .selectFrom('credentials')
        .selectAll()
        .where('id', '=', credential.id)
        .executeTakeFirstOrThrow();
      assert.ok(!stored.secret_hash.includes(token) && stored.secret_hash !== token);
      assert.deepEqual(await store.credentials.verifyToken(token), {
        subject: 'svc',
        claims: { credential: credential.id, scopes: ['endpoint:/chat'] },
      });
      await assert.rejects(store.credentials.verifyToken(`${token}x`), /not known/);
      assert.equal((await store.credentials.revoke(credential.id, 'tester')).status, 'revoked');
      await assert.rejects(
        store.credentials.verifyToken(token),
        (err: Error) => err instanceof CredentialError && /revoked/.test(err.message),
      );

      const expiring = await store.credentials.createToken(
        { name: 'old', scopes: [], expiresAt: later(-1000) },
        'tester',
      );
      assert.equal(expiring.credential.status, 'expired');
      await assert.rejects(store.credentials.verifyToken(expiring.token), /expired/);
      await assert.rejects(store.credentials.revoke('nope', 'tester'), NotFoundError);
    });

    it('keeps a wampcra credential as its PBKDF2-derived key, with its role, until revoked', async () => {
      const secret = 'wampcra-secret-value';
      const created = await store.credentials.createWampcra(
        { name: 'sensor', authid: 'sensor-1', secret, scopes: ['wamp:role:device'], expiresAt: null },
        'tester',
      );
      const found = await store.credentials.craKey('sensor-1');
      assert.ok(found !== null);
      const derived = pbkdf2Sync(secret, found.salt, found.iterations, found.keylen, 'sha256').toString(
        'base64',
      );
      assert.equal(found.key, derived);
      assert.equal(found.principal.claims['authrole'], 'device');
      const stored = await store.db
        .selectFrom('credentials')
        .select('secret_hash')
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.ok(!stored.secret_hash.includes(secret));
      await assert.rejects(
        store.credentials.createWampcra(
          { name: 'x', authid: 'sensor-1', secret: 's', scopes: [], expiresAt: null },
          'tester',
        ),
        ConflictError,
      );
      assert.equal(await store.credentials.craKey('nobody'), null);
      await store.credentials.revoke(created.id, 'tester');
      assert.equal(await store.credentials.craKey('sensor-1'), null);
    });

    it('checks passwords with scrypt; a second active user of one name is a conflict', async () => {
      const created = await store.credentials.createPassword(
        {
          name: 'device',
          username: 'dev-1',
          password: 'correct horse',
          scopes: ['mqtt:publish:a/#'],
          expiresAt: later(60_000),
        },
        'tester',
      );
      const principal = await store.credentials.verifyPassword('dev-1', Buffer.from('correct horse'));
      assert.equal(principal?.subject, 'dev-1');
      assert.deepEqual(principal?.claims['scopes'], ['mqtt:publish:a/#']);
      assert.equal(await store.credentials.verifyPassword('dev-1', Buffer.from('wrong')), null);
      assert.equal(await store.credentials.verifyPassword('nobody', Buffer.from('correct horse')), null);
      await assert.rejects(
        store.credentials.createPassword(
          { name: 'again', username: 'dev-1', password: 'x', scopes: [], expiresAt: null },
          'tester',
        ),
        ConflictError,
      );
      await store.credentials.revoke(created.id, 'tester');
      assert.equal(await store.credentials.verifyPassword('dev-1', Buffer.from('correct horse')), null);
      // Revoked, the name is free again.
      await store.credentials.createPassword(
        { name: 'again', username: 'dev-1', password: 'y', scopes: [], expiresAt: null },
        'tester',
      );
      const listed = await store.credentials.list();
      assert.ok(listed.every((c) => !('secret_hash' in c)));
    });

    it('authenticates charge points by identity and password bytes, with colons in the identity', async () => {
      await store.chargePoints.create(
        { identity: 'CP:01', allowed: true, password: 'key-0123456789abcdef' },
        'tester',
      );
      await store.chargePoints.create({ identity: 'CP-open', allowed: true, password: null }, 'tester');
      await assert.rejects(
        store.chargePoints.create({ identity: 'CP:01', allowed: true, password: null }, 'tester'),
        ConflictError,
      );
      assert.equal(await store.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdef')), 'ok');
      assert.equal(
        await store.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdeF')),
        'bad-password',
      );
      assert.equal(await store.chargePoints.authenticate('CP:01', null), 'bad-password');
      assert.equal(await store.chargePoints.authenticate('CP-open', null), 'ok');
      assert.equal(
        await store.chargePoints.authenticate('CP-open', null, { requirePassword: true }),
        'no-password',
      );
      assert.equal(await store.chargePoints.authenticate('CP-none', null), 'unknown');
      const updated = await store.chargePoints.update('CP:01', { allowed: false }, 'tester');
      assert.deepEqual([updated.allowed, updated.hasPassword], [false, true]);
      assert.equal(
        await store.chargePoints.authenticate('CP:01', Buffer.from('key-0123456789abcdef')),
        'not-allowed',
      );
      await store.chargePoints.remove('CP:01', 'tester');
      await assert.rejects(store.chargePoints.get('CP:01'), NotFoundError);
    });

    it('audits every change with actor, action and before/after, newest first, paged', async () => {
      const entry = await store.origins.add({ endpoint: '/x', origin: 'https://audit.example' }, 'auditor');
      await store.origins.remove(entry.id, 'auditor');
      const [removed, added] = await store.audit.list({ limit: 2 });
      assert.equal(removed?.action, 'origin.remove');
      assert.deepEqual([removed?.actor, removed?.after], ['auditor', null]);
      assert.equal((removed?.before as { origin: string }).origin, 'https://audit.example');
      assert.equal(added?.action, 'origin.add');
      const next = await store.audit.list({ limit: 1, before: added?.id });
      assert.ok(next.length === 1 && (next[0]?.id ?? '') < (added?.id ?? ''));
      const serialized = JSON.stringify(await store.audit.list({ limit: 1000 }));
      assert.ok(!serialized.includes('correct horse') && !serialized.includes('key-0123'));
    });

    it('OCPP: records boots and heartbeats of known and unknown charge points', async () => {
      assert.equal(await store.ocpp.stations.get('CP-boot'), null);
      store.ocpp.stations.recordHeartbeat('CP-beat');
      const booted = await store.ocpp.stations.recordBoot(
        'CP-boot',
        { vendor: 'Acme', model: 'Volt', firmwareVersion: '1.2' },
        'Accepted',
      );
      assert.deepEqual(
        [booted.vendor, booted.model, booted.serialNumber, booted.firmwareVersion, booted.bootStatus],
        ['Acme', 'Volt', null, '1.2', 'Accepted'],
      );
      store.ocpp.stations.recordHeartbeat('CP-boot');
      const again = await store.ocpp.stations.recordBoot(
        'CP-boot',
        { vendor: 'Acme', model: 'Volt' },
        'Pending',
      );
      assert.equal(again.bootStatus, 'Pending');
      assert.notEqual(again.lastHeartbeatAt, null, 'a new boot keeps the last heartbeat');
      assert.deepEqual(
        (await store.ocpp.stations.list()).map((s) => s.identity),
        ['CP-beat', 'CP-boot'],
      );
    });

    it('OCPP: last-seen times are seen at once and written behind, by flush or by closing the store', async () => {
      const identities = Array.from({ length: 30 }, (_, i) => `CP-group-${i}`);
      for (const identity of identities) store.ocpp.stations.recordHeartbeat(identity);
      store.ocpp.stations.recordHeartbeat('CP-group-0');
      const seen = await store.ocpp.stations.list();
      for (const identity of identities) {
        const station = seen.find((s) => s.identity === identity);
        assert.notEqual(station?.lastHeartbeatAt ?? null, null, identity);
      }
      assert.deepEqual(
        seen.map((s) => s.identity),
        [...seen.map((s) => s.identity)].sort(),
        'listed in identity order, unwritten ones among them',
      );
      await store.ocpp.stations.flush();
      const other = await BrokerStore.open(config);
      try {
        const written = await other.ocpp.stations.get('CP-group-7');
        assert.equal(
          written?.lastHeartbeatAt,
          seen.find((s) => s.identity === 'CP-group-7')?.lastHeartbeatAt,
        );
        assert.equal(written?.bootStatus, null, 'a charge point that only beat has a row of its own');
        other.ocpp.stations.recordHeartbeat('CP-closing');
      } finally {
        await other.close();
      }
      assert.notEqual((await store.ocpp.stations.get('CP-closing'))?.lastHeartbeatAt ?? null, null);
    });

    it('OCPP: a last-seen time written behind never replaces a later one', async () => {
      const tick = () => new Promise((resolve) => setTimeout(resolve, 5));
      store.ocpp.stations.recordHeartbeat('CP-late');
      await tick();
      const booted = await store.ocpp.stations.recordBoot(
        'CP-late',
        { vendor: 'Acme', model: 'Volt' },
        'Accepted',
      );
      await store.ocpp.stations.flush();
      const afterBoot = await store.ocpp.stations.get('CP-late');
      assert.equal(
        afterBoot?.updatedAt,
        booted.updatedAt,
        'the boot is later than the beat written after it',
      );
      // Another node (here a second store on the same database) writes a later beat first.
      store.ocpp.stations.recordHeartbeat('CP-late');
      const beatenHere = (await store.ocpp.stations.get('CP-late'))?.lastHeartbeatAt;
      await tick();
      const other = await BrokerStore.open(config);
      try {
        other.ocpp.stations.recordHeartbeat('CP-late');
        await other.ocpp.stations.flush();
        const later = (await other.ocpp.stations.get('CP-late'))?.lastHeartbeatAt;
        assert.ok(later !== undefined && later !== null && beatenHere !== undefined && beatenHere !== null);
        assert.ok(later > beatenHere);
        await store.ocpp.stations.flush();
        assert.equal((await other.ocpp.stations.get('CP-late'))?.lastHeartbeatAt, later);
      } finally {
        await other.close();
      }
    });

    it('OCPP: meter values of one tick are group-committed; a bad call fails alone', async () => {
      const sample = (value: string) => [{ timestamp: later(0), sampledValue: [{ value }] }];
      const results = await Promise.allSettled([
        store.ocpp.meterValues.add('CP-group-1', 1, null, sample('1')),
        store.ocpp.meterValues.add('CP-group-2', 1, null, sample(null as unknown as string)),
        store.ocpp.meterValues.add('CP-group-3', 1, null, sample('3')),
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
        const kept = await store.ocpp.meterValues.list({ identity, limit: 10 });
        assert.deepEqual(
          kept.map((v) => v.value),
          expected,
          identity,
        );
      }
    });

    it('OCPP: id tags with audit; authorize answers Invalid, Blocked, Expired, Accepted with parent', async () => {
      await store.ocpp.idTags.create(
        { idTag: 'TAG-1', status: 'Accepted', parentIdTag: 'GROUP', expiryDate: later(60_000) },
        'tester',
      );
      await store.ocpp.idTags.create(
        { idTag: 'TAG-old', status: 'Accepted', parentIdTag: null, expiryDate: later(-60_000) },
        'tester',
      );
      await assert.rejects(
        store.ocpp.idTags.create(
          { idTag: 'TAG-1', status: 'Blocked', parentIdTag: null, expiryDate: null },
          't',
        ),
        ConflictError,
      );
      const accepted = await store.ocpp.idTags.authorize('TAG-1');
      assert.equal(accepted.status, 'Accepted');
      assert.equal(accepted.parentIdTag, 'GROUP');
      assert.equal((await store.ocpp.idTags.authorize('TAG-old')).status, 'Expired');
      assert.deepEqual(await store.ocpp.idTags.authorize('TAG-none'), { status: 'Invalid' });
      const blocked = await store.ocpp.idTags.update(
        'TAG-1',
        { status: 'Blocked', parentIdTag: null },
        'tester',
      );
      assert.deepEqual([blocked.status, blocked.parentIdTag], ['Blocked', null]);
      assert.equal((await store.ocpp.idTags.authorize('TAG-1')).status, 'Blocked');
      assert.deepEqual(
        (await store.ocpp.idTags.list({ limit: 1, after: 'TAG-1' })).map((t) => t.idTag),
        ['TAG-old'],
      );
      await store.ocpp.idTags.remove('TAG-1', 'tester');
      await assert.rejects(store.ocpp.idTags.get('TAG-1'), NotFoundError);
      await assert.rejects(
        store.ocpp.idTags.update('TAG-1', { status: 'Accepted' }, 'tester'),
        NotFoundError,
      );
      const [removed, updated] = await store.audit.list({ limit: 2 });
      assert.deepEqual(
        [removed?.action, updated?.action, removed?.target],
        ['id-tag.remove', 'id-tag.update', 'TAG-1'],
      );
    });

    it('OCPP: connector status is one row per connector, replaced by the next notification', async () => {
      await store.ocpp.connectors.record('CP-c', {
        connectorId: 1,
        status: 'Available',
        errorCode: 'NoError',
      });
      await store.ocpp.connectors.record('CP-c', {
        connectorId: 0,
        status: 'Available',
        errorCode: 'NoError',
      });
      await store.ocpp.connectors.record('CP-c', {
        connectorId: 1,
        status: 'Faulted',
        errorCode: 'GroundFailure',
        info: 'leak',
        timestamp: '2026-01-01T00:00:00.000Z',
      });
      const connectors = await store.ocpp.connectors.list('CP-c');
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
      const first = await store.ocpp.transactions.start({
        identity: 'CP-t',
        connectorId: 1,
        idTag: 'TAG-t',
        startStatus: 'Accepted',
        meterStart: 100,
        startedAt: '2026-01-01T10:00:00.000Z',
      });
      const second = await store.ocpp.transactions.start({
        identity: 'CP-t',
        connectorId: 2,
        idTag: 'TAG-u',
        startStatus: 'Accepted',
        meterStart: 0,
        startedAt: '2026-01-01T10:01:00.000Z',
        reservationId: 7,
      });
      assert.ok(second.id > first.id);
      assert.equal(await store.ocpp.transactions.hasOngoing('TAG-t'), true);
      const resent = await store.ocpp.transactions.start({
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
      await store.ocpp.transactions.start({
        identity: 'CP-v',
        connectorId: 3,
        idTag: 'TAG-v',
        startStatus: 'Invalid',
        meterStart: 0,
        startedAt: '2026-01-01T10:02:00.000Z',
      });
      assert.equal(await store.ocpp.transactions.hasOngoing('TAG-v'), false, 'a start refused holds no tag');
      const values = Array.from({ length: 450 }, (_, i) => ({
        value: String(i),
        measurand: 'Power.Active.Import',
      }));
      const stored = await store.ocpp.meterValues.add('CP-t', 1, first.id, [
        { timestamp: '2026-01-01T10:05:00.000Z', sampledValue: [{ value: '150', unit: 'Wh' }] },
        { timestamp: '2026-01-01T10:06:00.000Z', sampledValue: values },
      ]);
      assert.equal(stored, 451);
      const listed = await store.ocpp.meterValues.list({ transactionId: first.id, limit: 1000 });
      assert.equal(listed.length, 451);
      assert.deepEqual([listed[0]?.value, listed[0]?.unit, listed[450]?.value], ['150', 'Wh', '449']);
      assert.equal(
        await store.ocpp.transactions.stop({
          identity: 'CP-other',
          id: first.id,
          meterStop: 1,
          stoppedAt: later(0),
        }),
        null,
        'another charge point cannot stop it',
      );
      const stopped = await store.ocpp.transactions.stop({
        identity: 'CP-t',
        id: first.id,
        meterStop: 900,
        stoppedAt: '2026-01-01T11:00:00.000Z',
        reason: 'Local',
      });
      assert.deepEqual([stopped?.meterStop, stopped?.stopReason], [900, 'Local']);
      assert.equal(
        await store.ocpp.transactions.stop({
          identity: 'CP-t',
          id: first.id,
          meterStop: 1,
          stoppedAt: later(0),
        }),
        null,
        'a stopped transaction stays stopped',
      );
      assert.equal(await store.ocpp.transactions.hasOngoing('TAG-t'), false);
      assert.deepEqual(
        (await store.ocpp.transactions.list({ identity: 'CP-t', ongoing: true, limit: 10 })).map((t) => t.id),
        [second.id],
      );
      assert.equal((await store.ocpp.transactions.get(second.id))?.reservationId, 7);
    });
  });
}

describe('store on PostgreSQL, one schema among several', () => {
  it('migrates its own schema when another schema of the database already holds the broker tables', async () => {
    const first = await createTestSchema();
    const second = await createTestSchema();
    const opened: BrokerStore[] = [];
    const open = async (databaseUrl: string): Promise<BrokerStore> => {
      const store = await BrokerStore.open({ sqlitePath: 'unused', databaseUrl });
      opened.push(store);
      return store;
    };
    try {
      const neighbour = await open(first.url);
      await neighbour.origins.add({ endpoint: null, origin: 'https://neighbour.example' }, 'tester');
      const own = await open(second.url);
      assert.deepEqual(await own.origins.list(), [], "the neighbour's rows are not ours");
      await own.origins.add({ endpoint: null, origin: 'https://own.example' }, 'tester');
      assert.deepEqual(
        (await neighbour.origins.list()).map((e) => e.origin),
        ['https://neighbour.example'],
      );
    } finally {
      for (const store of opened) await store.close();
      await first.drop();
      await second.drop();
    }
  });
});
