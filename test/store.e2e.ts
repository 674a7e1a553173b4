import assert from 'node:assert/strict';
import { pbkdf2Sync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { BrokerStore, ConflictError, NotFoundError } from '#broker/store';
import { CredentialError } from '#broker/handshake';
import { CraCredentials } from '../libs/protocols/wamp/src/store/cra-credentials.js';
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

    it('makes no table of any protocol: the OCPP module brings its own, charge points included', async () => {
      for (const table of ['charge_points', 'ocpp_stations']) {
        await assert.rejects(sql`select 1 from ${sql.table(table)}`.execute(store.db), table);
      }
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

    it("keeps a module's credential kind (WAMP-CRA) as its PBKDF2-derived key, until revoked", async () => {
      const cra = await CraCredentials.open(store);
      const secret = 'wampcra-secret-value';
      const created = await cra.create(
        { name: 'sensor', authid: 'sensor-1', secret, scopes: ['wamp:role:device'], expiresAt: null },
        'tester',
      );
      assert.equal(created.kind, 'wampcra');
      const found = await cra.craKey('sensor-1');
      assert.ok(found !== null);
      const derived = pbkdf2Sync(secret, found.salt, found.iterations, found.keylen, 'sha256').toString(
        'base64',
      );
      assert.equal(found.key, derived);
      assert.deepEqual(found.principal.claims['scopes'], ['wamp:role:device']);
      const stored = await store.db
        .selectFrom('credentials')
        .select('secret_hash')
        .where('id', '=', created.id)
        .executeTakeFirstOrThrow();
      assert.ok(!stored.secret_hash.includes(secret));
      // The module's own migration keeps one active credential per authid.
      await assert.rejects(
        cra.create({ name: 'x', authid: 'sensor-1', secret: 's', scopes: [], expiresAt: null }, 'tester'),
        ConflictError,
      );
      assert.equal(await cra.craKey('nobody'), null);
      await store.credentials.revoke(created.id, 'tester');
      assert.equal(await cra.craKey('sensor-1'), null);
      // A module cannot make the broker's own kinds, whose secrets the store checks itself.
      await assert.rejects(
        store.credentials.createOfKind(
          'password',
          { name: 'p', scopes: [], expiresAt: null },
          'u',
          'x',
          'tester',
        ),
        /own method/,
      );
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
