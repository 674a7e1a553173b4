import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import { createRPCError } from 'ocpp-rpc';
import request from 'supertest';
import { BOOT, chargePoint, counter, OCPP_ENDPOINT } from './support/ocpp.js';
import { badFields, problem } from './support/problems.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';

/** Each central-system command, a valid request and the answer the charge point gives. */
const COMMANDS: [string, Record<string, unknown>, Record<string, unknown>][] = [
  ['RemoteStartTransaction', { connectorId: 1, idTag: 'TAG-OK' }, { status: 'Accepted' }],
  ['RemoteStopTransaction', { transactionId: 7 }, { status: 'Rejected' }],
  ['Reset', { type: 'Soft' }, { status: 'Accepted' }],
  ['ChangeConfiguration', { key: 'HeartbeatInterval', value: '60' }, { status: 'RebootRequired' }],
  [
    'GetConfiguration',
    { key: ['HeartbeatInterval', 'Nope'] },
    { configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '60' }], unknownKey: ['Nope'] },
  ],
  ['UnlockConnector', { connectorId: 1 }, { status: 'Unlocked' }],
  ['ChangeAvailability', { connectorId: 0, type: 'Inoperative' }, { status: 'Scheduled' }],
  ['ClearCache', {}, { status: 'Accepted' }],
  ['TriggerMessage', { requestedMessage: 'StatusNotification', connectorId: 1 }, { status: 'Accepted' }],
  ['DataTransfer', { vendorId: 'com.acme', data: 'ping' }, { status: 'Accepted', data: 'pong' }],
];

describe('ocpp1.6 admin API: charge points, central-system calls and id tags', () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;
  let http: string;
  let cp: ReturnType<typeof chargePoint>;
  const received: [string, unknown][] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  before(async () => {
    broker = await startTestBroker({ endpoints: [OCPP_ENDPOINT], ocpp: { callTimeoutMs: 400 } }, [
      Ocpp16Module,
    ]);
    http = broker.url.replace(/^ws/, 'http');
    api = request(http);
    cp = chargePoint(broker.url, 'CP-admin');
    for (const [action, , answer] of COMMANDS) {
      cp.handle(action, async ({ params }) => {
        received.push([action, params]);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return answer;
      });
    }
    // Never answers, until the client itself gives up on it (at close).
    cp.handle(
      'GetLocalListVersion',
      ({ signal }) =>
        new Promise((_resolve, reject) =>
          signal?.addEventListener('abort', () => reject(new Error('closing'))),
        ),
    );
    cp.handle('UpdateFirmware', async () => {
      throw createRPCError('NotSupported', 'no firmware updates here');
    });
    await cp.connect();
    await cp.call('BootNotification', BOOT);
  });
  after(async () => {
    await cp.close();
    await broker.close();
  });

  for (const [action, payload, answer] of COMMANDS) {
    it(`${action}: the charge point receives it and the API answers with its response`, async () => {
      const res = await api.post(`/admin/v1/charge-points/CP-admin/calls/${action}`).send(payload);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, answer);
      assert.deepEqual(received.at(-1), [action, payload]);
    });
  }

  it('no body is the empty payload (ClearCache with curl -X POST)', async () => {
    const res = await api.post('/admin/v1/charge-points/CP-admin/calls/ClearCache');
    assert.deepEqual([res.status, res.body], [200, { status: 'Accepted' }]);
  });

  it('concurrent calls are queued: one outstanding CALL per connection, all answered', async () => {
    maxInFlight = 0;
    const results = await Promise.all(
      [1, 2, 3, 4].map((connectorId) =>
        api.post('/admin/v1/charge-points/CP-admin/calls/UnlockConnector').send({ connectorId }),
      ),
    );
    assert.deepEqual(
      results.map((r) => r.status),
      [200, 200, 200, 200],
    );
    assert.equal(maxInFlight, 1);
  });

  it('a payload that fails the schema -> 400 naming the field; nothing is sent', async () => {
    const before = received.length;
    const body = problem(
      await api.post('/admin/v1/charge-points/CP-admin/calls/Reset').send({ type: 'Warm' }),
      400,
    );
    assert.deepEqual(
      (body['errors'] as { field: string }[]).map((e) => e.field),
      ['type'],
    );
    assert.match(JSON.stringify(body['errors']), /PropertyConstraintViolation/);
    problem(await api.post('/admin/v1/charge-points/CP-admin/calls/Reset').send([1]), 400);
    assert.equal(received.length, before);
  });

  it('a charge point that is not connected -> 404; an action no central system sends -> 404', async () => {
    assert.match(
      String(
        problem(await api.post('/admin/v1/charge-points/CP-gone/calls/Reset').send({ type: 'Hard' }), 404)[
          'detail'
        ],
      ),
      /not connected/,
    );
    problem(await api.post('/admin/v1/charge-points/CP-admin/calls/Heartbeat').send({}), 404);
    problem(await api.post('/admin/v1/charge-points/CP-admin/calls/Nonsense').send({}), 404);
  });

  it('no answer within ocpp.callTimeoutMs -> 504, and the next call goes out', async () => {
    problem(await api.post('/admin/v1/charge-points/CP-admin/calls/GetLocalListVersion').send({}), 504);
    const res = await api.post('/admin/v1/charge-points/CP-admin/calls/ClearCache').send({});
    assert.equal(res.status, 200);
  });

  it('a CALLERROR from the charge point -> 502 with its code and description', async () => {
    const body = problem(
      await api.post('/admin/v1/charge-points/CP-admin/calls/UpdateFirmware').send({
        location: 'https://fw.example/4.3.bin',
        retrieveDate: new Date().toISOString(),
      }),
      502,
    );
    assert.deepEqual(body['ocppError'], {
      code: 'NotSupported',
      description: 'no firmware updates here',
      details: {},
    });
  });

  it('an answer that fails its schema -> 502 and counted (a charge point without strict mode)', async () => {
    const sloppy = chargePoint(broker.url, 'CP-sloppy', { strictMode: false });
    sloppy.handle('CancelReservation', async () => ({ status: 'Maybe' }));
    await sloppy.connect();
    try {
      const res = await api
        .post('/admin/v1/charge-points/CP-sloppy/calls/CancelReservation')
        .send({ reservationId: 1 });
      assert.deepEqual(problem(res, 502)['ocppError'], { code: 'PropertyConstraintViolation' });
      assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="invalid-response"'), 1);
    } finally {
      await sloppy.close();
    }
  });

  it('id tags: create, list, update, delete; 400 names fields, 409 duplicates, 404 unknown; audited', async () => {
    const created = await api
      .post('/admin/v1/id-tags')
      .send({ idTag: 'RFID-1', expiryDate: '2030-01-01T00:00:00+02:00' });
    assert.equal(created.status, 201);
    assert.deepEqual(
      [created.body.status, created.body.expiryDate],
      ['Accepted', '2029-12-31T22:00:00.000Z'],
    );
    problem(await api.post('/admin/v1/id-tags').send({ idTag: 'RFID-1' }), 409);
    problem(await api.post('/admin/v1/id-tags').send({ idTag: 'rfid-1' }), 409);
    assert.equal(
      (await api.get('/admin/v1/id-tags/rfid-1')).body.idTag,
      'RFID-1',
      'one tag, whatever the case',
    );
    const bad = problem(
      await api.post('/admin/v1/id-tags').send({ idTag: 'x'.repeat(21), status: 'Fine', extra: 1 }),
      400,
    );
    assert.deepEqual((bad['errors'] as { field: string }[]).map((e) => e.field).sort(), [
      'extra',
      'idTag',
      'status',
    ]);
    const patched = await api.patch('/admin/v1/id-tags/RFID-1').send({ status: 'Blocked', expiryDate: null });
    assert.deepEqual([patched.status, patched.body.status, patched.body.expiryDate], [200, 'Blocked', null]);
    const listed = await api.get('/admin/v1/id-tags?limit=10');
    assert.deepEqual(
      listed.body.map((t: { idTag: string }) => t.idTag),
      ['RFID-1'],
    );
    assert.equal((await api.delete('/admin/v1/id-tags/RFID-1')).status, 200);
    problem(await api.get('/admin/v1/id-tags/RFID-1'), 404);
    const audit = await api.get('/admin/v1/audit?limit=3');
    assert.deepEqual(
      audit.body.map((a: { action: string }) => a.action),
      ['id-tag.remove', 'id-tag.update', 'id-tag.create'],
    );
  });

  describe('charge points', () => {
    it('creates, reads, updates and deletes charge points; the password is write-only', async () => {
      const created = await api
        .post('/admin/v1/charge-points')
        .send({ identity: 'CP:0001', password: 'key-0123456789abcdef' })
        .expect(201);
      assert.deepEqual([created.body.allowed, created.body.hasPassword], [true, true]);
      assert.ok(!JSON.stringify(created.body).includes('key-0123'));
      problem(await api.post('/admin/v1/charge-points').send({ identity: 'CP:0001' }), 409);
      const updated = await api
        .patch('/admin/v1/charge-points/CP:0001')
        .send({ allowed: false, password: null });
      assert.deepEqual([updated.body.allowed, updated.body.hasPassword], [false, false]);
      await api.get('/admin/v1/charge-points/CP:0001').expect(200);
      await api.delete('/admin/v1/charge-points/CP:0001').expect(200);
      problem(await api.get('/admin/v1/charge-points/CP:0001'), 404);
      problem(await api.patch('/admin/v1/charge-points/CP:0001').send({ allowed: true }), 404);
    });

    it('refuses bad charge point bodies naming each field', async () => {
      const fields = badFields(
        await api
          .post('/admin/v1/charge-points')
          .send({ identity: 'a/b', password: 'short', allowed: 'yes' }),
      );
      assert.deepEqual(fields.sort(), ['allowed', 'identity', 'password']);
    });
  });

  it('the OpenAPI document lists the OCPP routes', async () => {
    const doc = await api.get('/admin/openapi.json');
    for (const path of [
      '/admin/v1/charge-points',
      '/admin/v1/charge-points/{identity}',
      '/admin/v1/id-tags',
      '/admin/v1/charge-points/{identity}/calls/{action}',
      '/admin/v1/transactions',
    ]) {
      assert.ok(path in doc.body.paths, path);
    }
  });
});
