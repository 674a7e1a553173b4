import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import request from 'supertest';
import { badFields, problem } from './support/problems.js';
import { connect, connectWithInbox, startMqttBroker } from './support/mqtt-helpers.js';
import { RawMqtt } from './support/raw-mqtt.js';
import { type TestBroker } from './support/test-broker.js';

// The dashboard's traces through the admin API, against the real broker and real MQTT.js clients: the
// MQTT module's "mqtt-client" trace follows one client id's packets, "mqtt-topic" the messages on a
// topic filter. The routes themselves name no protocol.

const ADMIN = 'traces-admin-token-0123456789';

interface TraceEvent {
  time: string;
  node: string | null;
  event: string;
  client: string | null;
  topic: string | null;
  qos: number | null;
  packetId: number | null;
  bytes: number | null;
  outcome: string;
  reason: string | null;
}
interface Trace {
  id: string;
  kind: string;
  key: string;
  startedBy: string;
  state: 'running' | 'ended';
  nodes: { node: string | null; state: string; events: number; dropped: number; overwritten: number }[];
  missing: string[];
  events: TraceEvent[];
}

/** What is waited for at most: generous, as the test asserts no timing. */
const PATIENCE_MS = 20_000;

describe('admin API: the dashboard traces, with the MQTT module', { timeout: 120_000 }, () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;
  const auth = { Authorization: `Bearer ${ADMIN}` };
  const clients: MqttClient[] = [];

  before(async () => {
    broker = await startMqttBroker(
      {},
      {},
      {
        admin: { tokens: [ADMIN] },
        authorization: {
          rules: [{ action: 'publish', topics: ['tr/locked/#'], permission: 'deny' }],
          noMatch: 'allow',
        },
      },
    );
    api = request(broker.url.replace(/^ws/, 'http'));
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await broker.close();
  });

  const start = (body: Record<string, unknown>) => api.post('/admin/v1/traces').set(auth).send(body);
  const read = async (id: string): Promise<Trace> =>
    (await api.get(`/admin/v1/traces/${id}`).set(auth).expect(200)).body as Trace;

  /** Reads the trace until `done` says it holds what is awaited (the broker writes as packets pass). */
  async function readUntil(id: string, done: (trace: Trace) => boolean): Promise<Trace> {
    const deadline = Date.now() + PATIENCE_MS;
    for (;;) {
      const trace = await read(id);
      if (done(trace)) return trace;
      if (Date.now() > deadline) assert.fail(`trace ${id} never got there: ${JSON.stringify(trace)}`);
      await sleep(50);
    }
  }

  const has = (trace: Trace, event: string, topic: string | null) =>
    trace.events.some((e) => e.event === event && e.topic === topic);

  it('lists the kinds the modules offer, behind the admin credential, and documents its routes', async () => {
    const res = await api.get('/admin/v1/traces').set(auth).expect(200);
    assert.deepEqual(res.body, {
      kinds: [
        { id: 'mqtt-client', title: 'MQTT client', keyLabel: 'Client id' },
        { id: 'mqtt-topic', title: 'MQTT topic filter', keyLabel: 'Topic filter' },
      ],
      traces: [],
      missing: [],
    });
    problem(await api.get('/admin/v1/traces'), 401);
    problem(await api.post('/admin/v1/traces').send({ kind: 'mqtt-client', key: 'x' }), 401);
    const doc = await api.get('/admin/openapi.json').expect(200);
    for (const path of ['/admin/v1/traces', '/admin/v1/traces/{id}', '/admin/v1/traces/{id}/download']) {
      assert.ok(doc.body.paths[path], path);
    }
    assert.ok(doc.body.paths['/admin/v1/traces'].post);
    assert.ok(doc.body.paths['/admin/v1/traces/{id}'].delete);
  });

  let clientTrace = '';

  it('traces a client id: its connect, subscribe, publishes in (accepted and refused) and deliveries, with no payload', async () => {
    const started = await start({ kind: 'mqtt-client', key: 'tr-dev', durationSec: 600 });
    assert.equal(started.status, 201, started.text);
    const summary = started.body as Trace;
    clientTrace = summary.id;
    assert.deepEqual(
      [summary.kind, summary.key, summary.startedBy, summary.state],
      ['mqtt-client', 'tr-dev', 'admin-token-1', 'running'],
    );
    assert.deepEqual(summary.nodes, [
      { node: null, state: 'running', events: 0, dropped: 0, overwritten: 0 },
    ]);

    const { client: device, inbox } = await connectWithInbox(broker, { clientId: 'tr-dev' });
    clients.push(device);
    await device.subscribeAsync('tr/data/#', { qos: 1 });
    await device.publishAsync('tr/data/1', 'secret-payload', { qos: 1 });
    await inbox.waitFor((m) => m.topic === 'tr/data/1');
    // Refused by the topic rules: MQTT.js hears PUBACK 0x87.
    await device.publishAsync('tr/locked/x', 'secret-too', { qos: 1 }).catch(() => undefined);
    const other = await connect(broker, { clientId: 'tr-other' });
    clients.push(other);
    await other.publishAsync('tr/data/2', 'from the other', { qos: 0 });
    await inbox.waitFor((m) => m.topic === 'tr/data/2');

    const trace = await readUntil(clientTrace, (t) => has(t, 'publish-in', 'tr/locked/x'));
    const line = (event: string, topic: string | null) => {
      const found = trace.events.find((e) => e.event === event && e.topic === topic);
      assert.ok(found, `${event} ${topic} in ${JSON.stringify(trace.events)}`);
      return found;
    };
    const connected = line('connect', null);
    assert.deepEqual([connected.client, connected.outcome], ['tr-dev', 'accepted']);
    assert.match(connected.reason ?? '', /MQTT 5\.0, new session/);
    const subscribed = line('subscribe', 'tr/data/#');
    assert.deepEqual([subscribed.outcome, subscribed.qos, subscribed.reason], ['granted', 1, 'QoS 1']);
    const published = line('publish-in', 'tr/data/1');
    assert.deepEqual(
      [published.client, published.outcome, published.qos, published.bytes],
      ['tr-dev', 'accepted', 1, 14],
    );
    assert.equal(typeof published.packetId, 'number');
    const delivered = line('delivered', 'tr/data/1');
    assert.deepEqual([delivered.client, delivered.outcome, delivered.qos], ['tr-dev', 'sent', 1]);
    assert.equal(delivered.reason, 'from tr-dev');
    const refused = line('publish-in', 'tr/locked/x');
    assert.equal(refused.outcome, 'refused');
    assert.match(refused.reason ?? '', /0x87 not authorized/);
    // Another client's message delivered to the traced one; that client's own publish is not traced.
    const fromOther = line('delivered', 'tr/data/2');
    assert.deepEqual([fromOther.client, fromOther.qos, fromOther.reason], ['tr-dev', 0, 'from tr-other']);
    assert.equal(trace.events.filter((e) => e.client === 'tr-other').length, 0);
    // Oldest first; each on this (single) node, at an ISO time.
    assert.deepEqual(
      trace.events.map((e) => e.time),
      trace.events.map((e) => e.time).sort(),
    );
    for (const e of trace.events) {
      assert.equal(e.node, null);
      assert.equal(new Date(e.time).toISOString(), e.time);
    }
    assert.ok(trace.events.indexOf(published) < trace.events.indexOf(delivered));
    assert.doesNotMatch(JSON.stringify(trace), /secret/);
  });

  it('downloads the events as NDJSON, one JSON object a line, as an attachment', async () => {
    const trace = await read(clientTrace);
    const res = await api
      .get(`/admin/v1/traces/${clientTrace}/download`)
      .set(auth)
      .buffer(true)
      .parse((r, done) => {
        let text = '';
        r.setEncoding('utf8');
        r.on('data', (chunk: string) => (text += chunk));
        r.on('end', () => done(null, text));
      })
      .expect(200);
    assert.match(res.headers['content-type'] ?? '', /^application\/x-ndjson/);
    assert.match(
      res.headers['content-disposition'] ?? '',
      /^attachment; filename="trace-[0-9a-f-]+\.ndjson"$/,
    );
    const text = res.body as string;
    assert.ok(text.endsWith('\n'));
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as TraceEvent);
    // At least what was read before: the client may have written more since.
    assert.ok(lines.length >= trace.events.length);
    assert.deepEqual(lines.slice(0, trace.events.length), trace.events);
  });

  it("shows the traced client's disconnect, and stops: nothing more is written, the events stay, both audited", async () => {
    const device = clients.shift() as MqttClient;
    await device.endAsync();
    await readUntil(clientTrace, (t) =>
      t.events.some((e) => e.event === 'disconnect' && e.client === 'tr-dev'),
    );

    const stopped = await api.delete(`/admin/v1/traces/${clientTrace}`).set(auth).expect(200);
    assert.equal((stopped.body as Trace).state, 'ended');
    const before = await read(clientTrace);
    assert.equal(before.state, 'ended');
    const again = await connect(broker, { clientId: 'tr-dev' });
    clients.push(again);
    await again.publishAsync('tr/data/3', 'after the stop', { qos: 1 });
    const after = await read(clientTrace);
    assert.deepEqual(after.events, before.events);

    const audit = (await api.get('/admin/v1/audit?limit=20').set(auth).expect(200)).body as {
      actor: string;
      action: string;
      target: string;
      before: unknown;
      after: unknown;
    }[];
    const rows = audit.filter((r) => r.target === clientTrace).map((r) => [r.action, r.actor]);
    assert.deepEqual(rows, [
      ['trace.stop', 'admin-token-1'],
      ['trace.start', 'admin-token-1'],
    ]);
    const started = audit.find((r) => r.action === 'trace.start' && r.target === clientTrace);
    assert.deepEqual(started?.after, { kind: 'mqtt-client', key: 'tr-dev', durationSec: 600 });
  });

  it('traces a topic filter: every publish in on a matching topic and its deliveries, and nothing else', async () => {
    const started = await start({ kind: 'mqtt-topic', key: 'tr/topic/+' });
    assert.equal(started.status, 201, started.text);
    const id = (started.body as Trace).id;
    const { client: reader, inbox } = await connectWithInbox(broker, { clientId: 'tr-reader' });
    const writer = await connect(broker, { clientId: 'tr-writer' });
    clients.push(reader, writer);
    await reader.subscribeAsync('tr/#', { qos: 1 });
    await writer.publishAsync('tr/elsewhere', 'not traced', { qos: 1 });
    await writer.publishAsync('tr/topic/a', 'traced', { qos: 1 });
    await inbox.waitFor((m) => m.topic === 'tr/topic/a');
    const trace = await readUntil(id, (t) => has(t, 'delivered', 'tr/topic/a'));
    assert.deepEqual(
      trace.events.map((e) => [e.event, e.client, e.topic, e.outcome]),
      [
        ['publish-in', 'tr-writer', 'tr/topic/a', 'accepted'],
        ['delivered', 'tr-reader', 'tr/topic/a', 'sent'],
      ],
    );
    await api.delete(`/admin/v1/traces/${id}`).set(auth).expect(200);
  });

  it('shows what a persistent session gets again at its reconnect (DUP, PUBREL), and a queued message that expired', async () => {
    const started = await start({ kind: 'mqtt-client', key: 'tr-resend', durationSec: 600 });
    assert.equal(started.status, 201, started.text);
    const id = (started.body as Trace).id;
    const url = `${broker.url}/mqtt`;
    const session = { clientId: 'tr-resend', clean: false, properties: { sessionExpiryInterval: 300 } };
    // A raw client: MQTT.js acknowledges every message as it reads it.
    const first = await RawMqtt.connected(url, session);
    first.send({
      cmd: 'subscribe',
      messageId: 1,
      subscriptions: [
        { topic: 'tr/resend/#', qos: 1 },
        { topic: 'tr/resend2/#', qos: 2 },
      ],
    });
    await first.next('suback');
    const publisher = await connect(broker, { clientId: 'tr-resend-publisher', protocolVersion: 5 });
    clients.push(publisher);
    await publisher.publishAsync('tr/resend/acked', 'secret-1', { qos: 1 });
    await publisher.publishAsync('tr/resend/unacked', 'secret-2', { qos: 1 });
    await publisher.publishAsync('tr/resend2/received', 'secret-3', { qos: 2 });
    const sent = new Map<string, number>();
    for (let n = 0; n < 3; n++) {
      const publish = await first.next('publish');
      sent.set(publish.topic, publish.messageId as number);
    }
    // One acknowledged; one not; the QoS 2 one received (PUBREC) but its PUBREL left unanswered.
    first.send({ cmd: 'puback', messageId: sent.get('tr/resend/acked') as number });
    first.send({ cmd: 'pubrec', messageId: sent.get('tr/resend2/received') as number });
    await first.next('pubrel');
    first.ws.close();
    await first.closed();
    await readUntil(id, (t) => t.events.some((e) => e.event === 'disconnect'));

    // Queued while away, with a message expiry interval of 1 s, and waited past it.
    await publisher.publishAsync('tr/resend/expiring', 'secret-4', {
      qos: 1,
      properties: { messageExpiryInterval: 1 },
    });
    await readUntil(id, (t) =>
      t.events.some((e) => e.topic === 'tr/resend/expiring' && e.outcome === 'queued'),
    );
    await sleep(2500);

    const second = await RawMqtt.connected(url, session);
    const again = await second.next('publish');
    assert.deepEqual(
      [again.topic, again.dup, again.messageId],
      ['tr/resend/unacked', true, sent.get('tr/resend/unacked')],
    );
    assert.equal((await second.next('pubrel')).messageId, sent.get('tr/resend2/received'));
    const trace = await readUntil(
      id,
      (t) =>
        t.events.some((e) => e.outcome === 'resent' && e.event === 'pubrel') &&
        t.events.some((e) => e.outcome === 'resent' && e.event === 'delivered') &&
        t.events.some((e) => e.outcome === 'expired'),
    );
    const fields = (e: TraceEvent) => [e.event, e.client, e.topic, e.qos, e.packetId, e.outcome];
    assert.deepEqual(
      trace.events.filter((e) => e.outcome === 'resent' || e.outcome === 'expired').map(fields),
      [
        ['delivered', 'tr-resend', 'tr/resend/unacked', 1, sent.get('tr/resend/unacked'), 'resent'],
        ['pubrel', 'tr-resend', 'tr/resend2/received', 2, sent.get('tr/resend2/received'), 'resent'],
        ['delivered', 'tr-resend', 'tr/resend/expiring', 1, null, 'expired'],
      ],
    );
    const resent = trace.events.find((e) => e.outcome === 'resent' && e.event === 'delivered');
    assert.equal(resent?.reason, 'DUP, in flight when the client went away, from tr-resend-publisher');
    assert.equal(resent?.bytes, 8);
    const expired = trace.events.find((e) => e.outcome === 'expired');
    assert.match(expired?.reason ?? '', /message expiry interval/);
    // The resends come after the reconnect's CONNECT, which found the session.
    const reconnected = trace.events.findLast((e) => e.event === 'connect');
    assert.match(reconnected?.reason ?? '', /session present/);
    assert.ok(trace.events.indexOf(reconnected as TraceEvent) < trace.events.indexOf(resent as TraceEvent));
    // The expired message never reached the client; no payload is in the trace.
    assert.ok(!second.received().some((p) => p.cmd === 'publish' && p.topic === 'tr/resend/expiring'));
    assert.doesNotMatch(JSON.stringify(trace), /secret/);
    second.ws.close();
    await api.delete(`/admin/v1/traces/${id}`).set(auth).expect(200);
  });

  it('refuses a kind no module offers, an invalid filter, an over-long key or a control character, naming the field', async () => {
    const unknown = await start({ kind: 'no-such-kind', key: 'x' });
    assert.deepEqual(badFields(unknown), ['kind']);
    assert.match(JSON.stringify(unknown.body), /mqtt-client, mqtt-topic/);
    const filter = await start({ kind: 'mqtt-topic', key: 'a/#/b' });
    assert.deepEqual(badFields(filter), ['key']);
    assert.match(JSON.stringify(filter.body), /Invalid topic filter/);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: 'k'.repeat(1025) })), ['key']);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: 'a\u0001b' })), ['key']);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: '' })), ['key']);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: 'x', durationSec: 0 })), [
      'durationSec',
    ]);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: 'x', durationSec: 1801 })), [
      'durationSec',
    ]);
    assert.deepEqual(badFields(await start({ kind: 'mqtt-client', key: 'x', payload: true })), ['payload']);
    assert.deepEqual(badFields(await api.get('/admin/v1/traces/not-an-id').set(auth)), ['id']);
    const missing = problem(
      await api.get('/admin/v1/traces/00000000-0000-4000-8000-000000000000').set(auth),
      404,
    );
    assert.match(missing['detail'] as string, /no trace 00000000-/);
    problem(await api.delete('/admin/v1/traces/00000000-0000-4000-8000-000000000000').set(auth), 404);
  });

  it('runs at most 8 traces at once: the next is refused with 409 until one stops', async () => {
    const ids: string[] = [];
    for (let n = 0; n < 8; n++) {
      const res = await start({ kind: 'mqtt-client', key: `tr-many-${n}` });
      assert.equal(res.status, 201, res.text);
      ids.push((res.body as Trace).id);
    }
    const refused = problem(await start({ kind: 'mqtt-client', key: 'tr-one-too-many' }), 409);
    assert.match(refused['detail'] as string, /8 traces are running, the most at once/);
    await api
      .delete(`/admin/v1/traces/${ids[0] as string}`)
      .set(auth)
      .expect(200);
    const next = await start({ kind: 'mqtt-client', key: 'tr-one-too-many' });
    assert.equal(next.status, 201, next.text);
    ids.push((next.body as Trace).id);
    for (const id of ids.slice(1)) await api.delete(`/admin/v1/traces/${id}`).set(auth).expect(200);
    const list = (await api.get('/admin/v1/traces').set(auth).expect(200)).body as { traces: Trace[] };
    assert.equal(list.traces.filter((t) => t.state === 'running').length, 0);
  });

  it('ends by itself when its time is up, and stays readable', async () => {
    const res = await start({ kind: 'mqtt-client', key: 'tr-brief', durationSec: 1 });
    assert.equal(res.status, 201, res.text);
    const id = (res.body as Trace).id;
    const ended = await readUntil(id, (t) => t.state === 'ended');
    assert.deepEqual(
      ended.nodes.map((n) => n.state),
      ['ended'],
    );
    // Ended: a client with its id connecting now writes nothing into it.
    const late = await connect(broker, { clientId: 'tr-brief' });
    clients.push(late);
    assert.deepEqual((await read(id)).events, []);
  });
});
