import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import request from 'supertest';
import { OCPP_ENDPOINT } from '../support/ocpp.js';
import { startTestBroker, type TestBroker } from '../support/test-broker.js';

const TOKEN = 'fuzz-admin-token-0123456789';

/** Bodies a careless or hostile admin client sends: any JSON, often nearly right. */
const body = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(
    fc.constantFrom(
      'origin',
      'endpoint',
      'name',
      'scopes',
      'username',
      'password',
      'identity',
      'allowed',
      'idTag',
      'status',
      'expiresAt',
      'authid',
      'secret',
      'role',
    ),
    fc.jsonValue({ maxDepth: 2 }),
  ),
);

/** Query strings: known names with any values, and anything at all. */
const query = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc
    .dictionary(
      fc.constantFrom('limit', 'after', 'endpoint', 'principal', 'subprotocol', 'action', 'actor'),
      fc.string({ maxLength: 20 }),
    )
    .map((q) => new URLSearchParams(q).toString()),
);

/** The admin API under fuzzed bodies and query strings: a client error or a success, never a 5xx. */
describe('fuzz: the admin API', { timeout: 120_000 }, () => {
  let broker: TestBroker;
  before(async () => {
    broker = await startTestBroker({ admin: { tokens: [TOKEN] }, endpoints: [OCPP_ENDPOINT] }, [
      Ocpp16Module,
    ]);
  });
  after(() => broker.close());

  const auth = { Authorization: `Bearer ${TOKEN}` };

  for (const [method, path] of [
    ['post', '/admin/v1/origins'],
    ['post', '/admin/v1/credentials/tokens'],
    ['post', '/admin/v1/credentials/passwords'],
    ['post', '/admin/v1/credentials/wampcra'],
    ['post', '/admin/v1/charge-points'],
    ['patch', '/admin/v1/charge-points/CP-1'],
    ['post', '/admin/v1/id-tags'],
    ['patch', '/admin/v1/id-tags/TAG-1'],
    ['post', '/admin/v1/publish'],
  ] as const) {
    it(`${method.toUpperCase()} ${path} with any JSON body`, async () => {
      await fc.assert(
        fc.asyncProperty(body, async (json) => {
          const res = await request(broker.app.getHttpServer())
            [method](path)
            .set(auth)
            .send(JSON.stringify(json))
            .type('json');
          assert.ok(res.status < 500, `${res.status} for ${JSON.stringify(json)}: ${res.text.slice(0, 200)}`);
        }),
        { seed: 20261127, numRuns: 60 },
      );
    });
  }

  for (const path of [
    '/admin/v1/connections',
    '/admin/v1/audit',
    '/admin/v1/charge-points',
    '/admin/v1/origins',
    '/admin/v1/id-tags',
  ]) {
    it(`GET ${path} with any query string`, async () => {
      const statuses = new Set<number>();
      await fc.assert(
        fc.asyncProperty(query, async (q) => {
          const res = await request(broker.app.getHttpServer()).get(`${path}?${q}`).set(auth);
          statuses.add(res.status);
          assert.ok(res.status < 500, `${res.status} for ?${q}: ${res.text.slice(0, 200)}`);
        }),
        { seed: 20261127, numRuns: 60 },
      );
      assert.ok(statuses.has(200), [...statuses].join(' '));
    });
  }
});
