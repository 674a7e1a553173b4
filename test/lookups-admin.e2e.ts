import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import request from 'supertest';
import { badFields, problem } from './support/problems.js';
import { RawMqtt } from './support/raw-mqtt.js';
import {
  connect,
  connectWithInbox,
  persistentSession,
  sessionPresent,
  startMqttBroker,
} from './support/mqtt-helpers.js';
import { type TestBroker } from './support/test-broker.js';

// The dashboard's lookups through the admin API, against the real broker and real MQTT.js clients:
// the MQTT module's "mqtt-session" lookup finds a session by client id, closes its connection (the
// session stays) and discards it; "mqtt-retained" browses and clears the retained messages matching a
// filter; "mqtt-subscribers" finds who a topic reaches. The routes themselves name no protocol.

const ADMIN = 'lookups-admin-token-0123456789';

interface Field {
  label: string;
  value: string | null;
}
interface Row {
  key: string;
  cells: Record<string, unknown>;
}
interface View {
  heading: string;
  node: string | null;
  fields: Field[];
  tables: { id: string; title: string; rows: Row[] }[];
  missing: string[];
  actions: { id: string; label: string; confirm: string }[];
}

function field(view: View, label: string): string | null | undefined {
  return view.fields.find((f) => f.label === label)?.value;
}

/** Resolves with the reason code of the DISCONNECT the broker sends the client, once it is also closed. */
async function toldAndClosed(client: MqttClient): Promise<number | undefined> {
  const [reasonCode] = await Promise.all([
    new Promise<number | undefined>((resolve) => client.once('disconnect', (p) => resolve(p.reasonCode))),
    new Promise<void>((resolve) => client.once('close', () => resolve())),
  ]);
  return reasonCode;
}

describe('admin API: the dashboard lookups, with the MQTT module', () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;
  let tcpPort: number;
  const auth = { Authorization: `Bearer ${ADMIN}` };
  const clients: MqttClient[] = [];

  before(async () => {
    broker = await startMqttBroker(
      { tcpPort: 0, tcpHost: '127.0.0.1' },
      {},
      {
        admin: { tokens: [ADMIN] },
        // The administrator is held to the topic rules as any principal: it may not publish under locked/.
        authorization: {
          rules: [{ user: 'admin-token-1', action: 'publish', topics: ['lkr/locked/#'], permission: 'deny' }],
          noMatch: 'allow',
        },
      },
    );
    api = request(broker.url.replace(/^ws/, 'http'));
    const line = broker.logLines().find((l) => l['msg'] === 'mqtt tcp listener started');
    tcpPort = line?.['port'] as number;
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await broker.close();
  });

  it('lists the lookups the modules offer, behind the admin credential', async () => {
    const res = await api.get('/admin/v1/lookups').set(auth).expect(200);
    assert.deepEqual(res.body, [
      { id: 'mqtt-session', title: 'MQTT session', keyLabel: 'Client id' },
      { id: 'mqtt-retained', title: 'MQTT retained messages', keyLabel: 'Topic filter' },
      { id: 'mqtt-subscribers', title: 'MQTT subscribers', keyLabel: 'Topic' },
    ]);
    problem(await api.get('/admin/v1/lookups'), 401);
    problem(await api.get('/admin/v1/lookups/mqtt-session/anyone'), 401);
    problem(await api.post('/admin/v1/lookups/mqtt-session/anyone/actions/discard'), 401);
    const doc = await api.get('/admin/openapi.json').expect(200);
    assert.ok(doc.body.paths['/admin/v1/lookups/{id}/{key}']);
    assert.ok(doc.body.paths['/admin/v1/lookups/{id}/{key}/actions/{action}']);
  });

  it('finds a connected client by its client id: its connection, will and subscriptions, and what may be done', async () => {
    const device = await connect(broker, {
      ...persistentSession('lk-device/1'),
      will: { topic: 'wills/lk-device-1', payload: Buffer.from('gone'), qos: 1, retain: true },
    });
    clients.push(device);
    await device.subscribeAsync('lk/#', { qos: 1 });
    await device.subscribeAsync('lk/other', { qos: 0 });
    // A client id with a slash is one path segment, encoded.
    const res = await api
      .get(`/admin/v1/lookups/mqtt-session/${encodeURIComponent('lk-device/1')}`)
      .set(auth);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers['broker-missing-nodes'], undefined);
    const view = res.body as View;
    assert.equal(view.heading, 'lk-device/1');
    assert.equal(view.node, null);
    assert.deepEqual(view.missing, []);
    assert.equal(field(view, 'Connection'), 'WebSocket');
    assert.equal(field(view, 'Protocol version'), '5.0');
    assert.equal(field(view, 'Principal'), 'anonymous');
    assert.match(field(view, 'Address') ?? '', /127\.0\.0\.1/);
    assert.equal(field(view, 'Expiry'), '300 s after its connection ends');
    assert.equal(field(view, 'Queued'), '0');
    assert.equal(field(view, 'Will'), 'wills/lk-device-1 (QoS 1, retained)');
    const [subscriptions] = view.tables;
    assert.equal(subscriptions?.id, 'subscriptions');
    assert.deepEqual(subscriptions?.rows, [
      { key: 'lk/#', cells: { filter: 'lk/#', qos: 1 } },
      { key: 'lk/other', cells: { filter: 'lk/other', qos: 0 } },
    ]);
    assert.deepEqual(
      view.actions.map((a) => a.id),
      ['kick', 'discard'],
    );
    for (const action of view.actions) assert.match(action.confirm, /lk-device\/1/);
  });

  it('answers 404 as a problem document for a client id with no session, an unknown lookup or action', async () => {
    const nobody = problem(await api.get('/admin/v1/lookups/mqtt-session/nobody-here').set(auth), 404);
    assert.match(nobody['detail'] as string, /no MQTT session nobody-here/);
    const unknown = problem(await api.get('/admin/v1/lookups/no-such-lookup/x').set(auth), 404);
    assert.match(unknown['detail'] as string, /no lookup no-such-lookup/);
    problem(await api.post('/admin/v1/lookups/no-such-lookup/x/actions/kick').set(auth), 404);
    problem(await api.post('/admin/v1/lookups/mqtt-session/nobody-here/actions/discard').set(auth), 404);
    const device = await connect(broker, persistentSession('lk-device-404'));
    clients.push(device);
    problem(await api.post('/admin/v1/lookups/mqtt-session/lk-device-404/actions/explode').set(auth), 404);
    assert.equal(device.connected, true);
  });

  it('refuses a key with a control character or longer than 1024 characters, naming the field', async () => {
    assert.deepEqual(badFields(await api.get('/admin/v1/lookups/mqtt-session/a%01b').set(auth)), ['key']);
    const long = 'k'.repeat(1025);
    assert.deepEqual(badFields(await api.get(`/admin/v1/lookups/mqtt-session/${long}`).set(auth)), ['key']);
    assert.deepEqual(badFields(await api.post('/admin/v1/lookups/mqtt-session/x/actions/a%0Ab').set(auth)), [
      'action',
    ]);
    problem(await api.get(`/admin/v1/lookups/mqtt-session/${'k'.repeat(1024)}`).set(auth), 404);
  });

  it('kick closes the connection and the session stays: the client comes back to it, subscriptions and all', async () => {
    const device = await connect(broker, persistentSession('lk-kick'));
    await device.subscribeAsync('lk/kick/#', { qos: 1 });
    const ended = toldAndClosed(device);
    await api.post('/admin/v1/lookups/mqtt-session/lk-kick/actions/kick').set(auth).expect(204);
    assert.equal(await ended, 0x98);
    const away = (await api.get('/admin/v1/lookups/mqtt-session/lk-kick').set(auth).expect(200)).body as View;
    assert.equal(field(away, 'Connection'), 'not connected');
    // Nothing to close while it is away; it may still be discarded.
    assert.deepEqual(
      away.actions.map((a) => a.id),
      ['discard'],
    );
    problem(await api.post('/admin/v1/lookups/mqtt-session/lk-kick/actions/kick').set(auth), 404);

    const back = await connect(broker, persistentSession('lk-kick'));
    clients.push(back);
    assert.equal(sessionPresent(back), true);
    const view = (await api.get('/admin/v1/lookups/mqtt-session/lk-kick').set(auth).expect(200)).body as View;
    assert.deepEqual(view.tables[0]?.rows, [{ key: 'lk/kick/#', cells: { filter: 'lk/kick/#', qos: 1 } }]);
  });

  it('kick closes a connection over TCP too, which has no gateway connection id', async () => {
    const device = await connectAsync(`mqtt://127.0.0.1:${tcpPort}`, {
      clientId: 'lk-tcp',
      clean: false,
      protocolVersion: 4,
      reconnectPeriod: 0,
    });
    const closed = new Promise<void>((resolve) => device.once('close', () => resolve()));
    const found = (await api.get('/admin/v1/lookups/mqtt-session/lk-tcp').set(auth).expect(200)).body as View;
    assert.equal(field(found, 'Connection'), 'TCP');
    assert.equal(field(found, 'Protocol version'), '3.1.1');
    await api.post('/admin/v1/lookups/mqtt-session/lk-tcp/actions/kick').set(auth).expect(204);
    await closed;
    const away = (await api.get('/admin/v1/lookups/mqtt-session/lk-tcp').set(auth).expect(200)).body as View;
    assert.equal(field(away, 'Connection'), 'not connected');
  });

  it('discard ends the session: DISCONNECT 0x98, then the client starts afresh', async () => {
    const device = await connect(broker, persistentSession('lk-discard'));
    await device.subscribeAsync('lk/discard/#', { qos: 1 });
    const ended = toldAndClosed(device);
    await api.post('/admin/v1/lookups/mqtt-session/lk-discard/actions/discard').set(auth).expect(204);
    assert.equal(await ended, 0x98);
    problem(await api.get('/admin/v1/lookups/mqtt-session/lk-discard').set(auth), 404);
    const back = await connect(broker, persistentSession('lk-discard'));
    clients.push(back);
    assert.equal(sessionPresent(back), false);
    const view = (await api.get('/admin/v1/lookups/mqtt-session/lk-discard').set(auth).expect(200))
      .body as View;
    assert.deepEqual(view.tables[0]?.rows, []);
  });

  it('audits each action done, with who asked; a refused one leaves no row', async () => {
    const audit = (await api.get('/admin/v1/audit?limit=50').set(auth).expect(200)).body as {
      actor: string;
      action: string;
      target: string;
    }[];
    const rows = audit
      .filter((r) => r.action.startsWith('mqtt-session.'))
      .map((r) => [r.action, r.target, r.actor]);
    // Newest first.
    assert.deepEqual(rows, [
      ['mqtt-session.discard', 'lk-discard', 'admin-token-1'],
      ['mqtt-session.kick', 'lk-tcp', 'admin-token-1'],
      ['mqtt-session.kick', 'lk-kick', 'admin-token-1'],
    ]);
  });

  it('an administrator closing a connection is no protocol error: DISCONNECT 0x98, then WebSocket close 1000', async () => {
    for (const action of ['kick', 'discard']) {
      const raw = await RawMqtt.connected(`${broker.url}/mqtt`, { clientId: `lk-close-${action}` });
      await api
        .post(`/admin/v1/lookups/mqtt-session/lk-close-${action}/actions/${action}`)
        .set(auth)
        .expect(204);
      assert.equal((await raw.next('disconnect')).reasonCode, 0x98);
      assert.equal((await raw.closed()).code, 1000);
    }
  });

  const key = (k: string) => encodeURIComponent(k);

  it('browses the retained messages matching a filter: topic, QoS, size, a bounded preview (binary escaped), content type, stored time', async () => {
    const before = Date.now();
    const publisher = await connect(broker, { clientId: 'lkr-publisher' });
    clients.push(publisher);
    await publisher.publishAsync('lkr/site/a/temp', '21.5', {
      qos: 1,
      retain: true,
      properties: { contentType: 'text/plain' },
    });
    // QoS 0: stored once a later QoS 1 publish on the same connection is acknowledged.
    await publisher.publishAsync('lkr/site/b/raw', Buffer.from([0x00, 0xff, 0x41, 0x0a]), {
      qos: 0,
      retain: true,
    });
    await publisher.publishAsync('lkr/site/c/big', Buffer.alloc(10_000, 'z'), { qos: 1, retain: true });
    await publisher.publishAsync('lkr/other/x', 'elsewhere', { qos: 1, retain: true });

    const res = await api.get(`/admin/v1/lookups/mqtt-retained/${key('lkr/site/#')}`).set(auth);
    assert.equal(res.status, 200, res.text);
    const view = res.body as View;
    assert.equal(view.heading, 'lkr/site/#');
    assert.equal(field(view, 'Matched'), '3');
    const [table] = view.tables;
    assert.equal(table?.id, 'retained');
    assert.equal(table?.title, 'Retained messages (3)');
    const rows = new Map(table?.rows.map((r) => [r.key, r.cells]));
    assert.deepEqual([...rows.keys()].sort(), ['lkr/site/a/temp', 'lkr/site/b/raw', 'lkr/site/c/big']);
    const { stored, ...temp } = rows.get('lkr/site/a/temp') ?? {};
    const storedAt = Date.parse(String(stored));
    assert.ok(storedAt >= before && storedAt <= Date.now(), `stored ${String(stored)}`);
    assert.deepEqual(temp, {
      topic: 'lkr/site/a/temp',
      qos: 1,
      bytes: 4,
      preview: '21.5',
      contentType: 'text/plain',
      expires: null,
    });
    assert.equal(rows.get('lkr/site/b/raw')?.['preview'], '\\x00\\xffA\\x0a');
    assert.equal(rows.get('lkr/site/b/raw')?.['qos'], 0);
    const big = rows.get('lkr/site/c/big');
    assert.equal(big?.['bytes'], 10_000);
    assert.equal(big?.['preview'], `${'z'.repeat(63)}…`);
    assert.deepEqual(
      view.actions.map((a) => a.id),
      ['clear'],
    );
    assert.match(view.actions[0]?.confirm ?? '', /Clear 3 retained messages matching lkr\/site\/#/);
    // One topic, as a filter with no wildcard.
    const one = (
      await api
        .get(`/admin/v1/lookups/mqtt-retained/${key('lkr/other/x')}`)
        .set(auth)
        .expect(200)
    ).body as View;
    assert.deepEqual(
      one.tables[0]?.rows.map((r) => r.cells['preview']),
      ['elsewhere'],
    );
  });

  it("browses by a single-level wildcard: 'sensors/+/temp' lists those topics and no others", async () => {
    const publisher = await connect(broker, { clientId: 'lkr-sensors' });
    clients.push(publisher);
    for (const topic of ['sensors/a/temp', 'sensors/b/temp', 'sensors/a/humidity', 'sensors/a/temp/raw']) {
      await publisher.publishAsync(topic, topic, { qos: 1, retain: true });
    }
    const res = await api.get(`/admin/v1/lookups/mqtt-retained/${key('sensors/+/temp')}`).set(auth);
    assert.equal(res.status, 200, res.text);
    const view = res.body as View;
    assert.equal(field(view, 'Matched'), '2');
    assert.deepEqual(view.tables[0]?.rows.map((r) => r.key).sort(), ['sensors/a/temp', 'sensors/b/temp']);
  });

  it('answers 404 for a filter matching no retained message, 400 naming the problem for an invalid filter or topic', async () => {
    const none = problem(
      await api.get(`/admin/v1/lookups/mqtt-retained/${key('lkr/none/#')}`).set(auth),
      404,
    );
    assert.match(none['detail'] as string, /no MQTT retained messages lkr\/none\/#/);
    const bad = problem(await api.get(`/admin/v1/lookups/mqtt-retained/${key('lkr/#/x')}`).set(auth), 400);
    assert.match(bad['detail'] as string, /Invalid topic filter/);
    problem(await api.post(`/admin/v1/lookups/mqtt-retained/${key('lkr/#/x')}/actions/clear`).set(auth), 400);
    problem(
      await api.post(`/admin/v1/lookups/mqtt-retained/${key('lkr/none/#')}/actions/clear`).set(auth),
      404,
    );
    const topic = problem(await api.get(`/admin/v1/lookups/mqtt-subscribers/${key('lks/+')}`).set(auth), 400);
    assert.match(topic['detail'] as string, /Invalid topic name/);
  });

  it('clear empties the matching retained messages: a new subscriber gets none, and the others stay', async () => {
    await api
      .post(`/admin/v1/lookups/mqtt-retained/${key('lkr/site/#')}/actions/clear`)
      .set(auth)
      .expect(204);
    problem(await api.get(`/admin/v1/lookups/mqtt-retained/${key('lkr/site/#')}`).set(auth), 404);
    problem(
      await api.post(`/admin/v1/lookups/mqtt-retained/${key('lkr/site/#')}/actions/clear`).set(auth),
      404,
    );

    // A new subscriber: the first message it gets is one published after its SUBACK, not a retained one
    // (the broker sends retained messages right after the SUBACK, ahead of anything published later).
    const { client: reader, inbox } = await connectWithInbox(broker, { clientId: 'lkr-reader' });
    clients.push(reader);
    await reader.subscribeAsync(['lkr/site/#', 'lkr/other/#'], { qos: 1 });
    const publisher = await connect(broker, { clientId: 'lkr-after' });
    clients.push(publisher);
    await publisher.publishAsync('lkr/site/a/marker', 'after the clear', { qos: 1 });
    const marker = await inbox.waitFor((m) => m.topic === 'lkr/site/a/marker');
    assert.deepEqual(
      inbox.received.map((m) => [m.topic, m.payload, m.packet.retain]),
      [
        ['lkr/other/x', 'elsewhere', true],
        ['lkr/site/a/marker', 'after the clear', false],
      ],
    );
    assert.equal(marker.packet.retain, false);

    const audit = (await api.get('/admin/v1/audit?limit=50').set(auth).expect(200)).body as {
      actor: string;
      action: string;
      target: string;
    }[];
    assert.deepEqual(
      audit.filter((r) => r.action.startsWith('mqtt-retained.')).map((r) => [r.action, r.target, r.actor]),
      [['mqtt-retained.clear', 'lkr/site/#', 'admin-token-1']],
    );
  });

  it('clear holds the administrator to the topic rules: one topic it may not publish to and nothing is cleared', async () => {
    const publisher = await connect(broker, { clientId: 'lkr-locked' });
    clients.push(publisher);
    await publisher.publishAsync('lkr/locked/a', 'kept', { qos: 1, retain: true });
    await publisher.publishAsync('lkr/open/a', 'kept too', { qos: 1, retain: true });
    const refused = await api
      .post(`/admin/v1/lookups/mqtt-retained/${key('lkr/+/a')}/actions/clear`)
      .set(auth);
    problem(refused, 403);
    const view = (
      await api
        .get(`/admin/v1/lookups/mqtt-retained/${key('lkr/+/a')}`)
        .set(auth)
        .expect(200)
    ).body as View;
    assert.deepEqual(view.tables[0]?.rows.map((r) => r.key).sort(), ['lkr/locked/a', 'lkr/open/a']);
  });

  it('finds the subscribers of a topic: each matching filter, shared groups included, and not the others', async () => {
    const amy = await connect(broker, persistentSession('lks-amy'));
    const bob = await connect(broker, { clientId: 'lks-bob' });
    const cat = await connect(broker, { clientId: 'lks-cat' });
    const dan = await connect(broker, { clientId: 'lks-dan' });
    clients.push(amy, bob, cat, dan);
    await amy.subscribeAsync('lks/+/temp', { qos: 1 });
    await bob.subscribeAsync('lks/#', { qos: 0 });
    await cat.subscribeAsync('lks/b/temp', { qos: 1 });
    await dan.subscribeAsync('$share/ops/lks/a/+', { qos: 1 });
    // Away: its session (and subscription) stays once an administrator closed its connection.
    const away = new Promise<void>((resolve) => amy.once('close', () => resolve()));
    await api.post('/admin/v1/lookups/mqtt-session/lks-amy/actions/kick').set(auth).expect(204);
    await away;

    const res = await api.get(`/admin/v1/lookups/mqtt-subscribers/${key('lks/a/temp')}`).set(auth);
    assert.equal(res.status, 200, res.text);
    const view = res.body as View;
    assert.equal(view.heading, 'lks/a/temp');
    assert.equal(field(view, 'Subscriptions'), '3');
    assert.deepEqual(view.actions, []);
    assert.deepEqual(
      view.tables[0]?.rows.map((r) => r.cells),
      [
        {
          client: 'lks-amy',
          node: null,
          filter: 'lks/+/temp',
          qos: 1,
          group: null,
          connected: 'not connected',
        },
        { client: 'lks-bob', node: null, filter: 'lks/#', qos: 0, group: null, connected: 'connected' },
        {
          client: 'lks-dan',
          node: null,
          filter: '$share/ops/lks/a/+',
          qos: 1,
          group: 'ops',
          connected: 'connected',
        },
      ],
    );
    problem(await api.get(`/admin/v1/lookups/mqtt-subscribers/${key('nobody/listens')}`).set(auth), 404);
  });
});
