import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { connect, persistentSession, sessionPresent, startMqttBroker } from './support/mqtt-helpers.js';
import { type TestBroker } from './support/test-broker.js';

interface SessionView {
  node: string | null;
  connection: {
    id: string | null;
    transport: string;
    protocolVersion: number;
    principal: string | null;
  } | null;
  expirySec: number;
  subscriptions: { filter: string; qos: number }[];
  queued: number;
  inflight: number;
  will: { topic: string; qos: number; retain: boolean; delaySec: number } | null;
}

async function session(base: string, clientId: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}/admin/v1/mqtt/sessions/${encodeURIComponent(clientId)}`);
  return { status: res.status, body: await res.json() };
}

describe('admin API: an MQTT session by client id', () => {
  let broker: TestBroker;
  let base: string;
  const clients: MqttClient[] = [];

  before(async () => {
    broker = await startMqttBroker();
    base = broker.url.replace(/^ws/, 'http');
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await broker.close();
  });

  it("shows a device's session, its connection to close, and its queue growing while it is away", async () => {
    const device = await connect(broker, {
      ...persistentSession('adm-device-1'),
      will: { topic: 'wills/adm-device-1', payload: Buffer.from('gone'), qos: 1, retain: false },
    });
    await device.subscribeAsync('adm/#', { qos: 1 });
    const live = (await session(base, 'adm-device-1')).body as SessionView;
    assert.equal(live.node, null);
    assert.deepEqual(live.subscriptions, [{ filter: 'adm/#', qos: 1 }]);
    assert.deepEqual(live.will, { topic: 'wills/adm-device-1', qos: 1, retain: false, delaySec: 0 });
    assert.equal(live.expirySec, 300);
    assert.equal(live.connection?.transport, 'ws');
    assert.equal(live.connection?.protocolVersion, 5);
    const id = live.connection?.id ?? '';
    assert.notEqual(id, '');

    // Closed through the connections route the view names: the session stays, its queue grows.
    const closed = new Promise<void>((resolve) => device.once('close', () => resolve()));
    const res = await fetch(`${base}/admin/v1/connections/${encodeURIComponent(id)}`, { method: 'DELETE' });
    assert.equal(res.status, 200);
    await closed;
    const publisher = await connect(broker, { clientId: 'adm-publisher' });
    clients.push(publisher);
    for (let i = 0; i < 3; i++) await publisher.publishAsync('adm/x', String(i), { qos: 1 });
    const away = (await session(base, 'adm-device-1')).body as SessionView;
    assert.equal(away.connection, null);
    assert.equal(away.queued + away.inflight, 3);
  });

  it('discards a connected session: DISCONNECT 0x98 to its client, its will sent, its subscriptions gone', async () => {
    const watcher = await connect(broker, { clientId: 'adm-will-watcher' });
    clients.push(watcher);
    await watcher.subscribeAsync('wills/adm-device-2', { qos: 1 });
    const wills: string[] = [];
    watcher.on('message', (topic) => wills.push(topic));
    const device = await connect(broker, {
      ...persistentSession('adm-device-2'),
      will: { topic: 'wills/adm-device-2', payload: Buffer.from('gone'), qos: 1, retain: false },
    });
    await device.subscribeAsync('adm2/#', { qos: 1 });
    const told = new Promise<number | undefined>((resolve) =>
      device.once('disconnect', (packet) => resolve(packet.reasonCode)),
    );
    const res = await fetch(`${base}/admin/v1/mqtt/sessions/adm-device-2`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(await told, 0x98);
    await until('the will', () => wills.length === 1, 5000);
    assert.equal((await session(base, 'adm-device-2')).status, 404);
    // Back with clean start 0: a new session, nothing of the old one.
    const back = await connect(broker, persistentSession('adm-device-2'));
    clients.push(back);
    assert.equal(sessionPresent(back), false);
    const view = (await session(base, 'adm-device-2')).body as SessionView;
    assert.deepEqual(view.subscriptions, []);
  });

  it('discards a session that waits for its client: the queue goes, the client comes back to nothing', async () => {
    const device = await connect(broker, persistentSession('adm-device-3'));
    await device.subscribeAsync('adm3/#', { qos: 1 });
    await device.endAsync();
    const publisher = await connect(broker, { clientId: 'adm-publisher-3' });
    clients.push(publisher);
    for (let i = 0; i < 3; i++) await publisher.publishAsync('adm3/x', String(i), { qos: 1 });
    assert.equal(((await session(base, 'adm-device-3')).body as SessionView).queued, 3);
    const res = await fetch(`${base}/admin/v1/mqtt/sessions/adm-device-3`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    const audit = (await (await fetch(`${base}/admin/v1/audit?limit=5`)).json()) as {
      action: string;
      target: string;
    }[];
    assert.ok(audit.some((r) => r.action === 'mqtt.session.discard' && r.target === 'adm-device-3'));
    const got: string[] = [];
    const back = await connect(broker, persistentSession('adm-device-3'));
    clients.push(back);
    back.on('message', (_topic, payload) => got.push(payload.toString()));
    assert.equal(sessionPresent(back), false);
    // A round trip after the CONNACK: the three queued messages would have come before its answer.
    await back.subscribeAsync('adm3-other', { qos: 1 });
    assert.deepEqual(got, []);
    assert.equal(
      (await fetch(`${base}/admin/v1/mqtt/sessions/adm-device-3`, { method: 'DELETE' })).status,
      204,
    );
    assert.equal(
      (await fetch(`${base}/admin/v1/mqtt/sessions/adm-device-3`, { method: 'DELETE' })).status,
      404,
    );
  });

  it('answers 404 as a problem document for a client id with no session', async () => {
    const { status, body } = await session(base, 'nobody-here');
    assert.equal(status, 404);
    assert.match((body as { detail: string }).detail, /no MQTT session nobody-here/);
  });
});

describe('cluster: an MQTT session found from any node', () => {
  let cluster: TestCluster;
  const clients: MqttClient[] = [];

  before(async () => {
    cluster = await TestCluster.start(2);
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await cluster?.close();
  });

  it('names the node that holds it, with its connection', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const device = await connect(n2, persistentSession('adm-cluster-1'));
    clients.push(device);
    await device.subscribeAsync('adm/cluster/#', { qos: 1 });
    let view: SessionView | null = null;
    await until(
      'n1 finds the session on n2',
      async () => {
        const { status, body } = await session(n1.http, 'adm-cluster-1');
        view = status === 200 ? (body as SessionView) : null;
        return (view?.connection ?? null) !== null;
      },
      5000,
    );
    const found = view as unknown as SessionView;
    assert.equal(found.node, n2.id);
    assert.deepEqual(found.subscriptions, [{ filter: 'adm/cluster/#', qos: 1 }]);
  });

  it('discards a session held by another node; the client starts afresh wherever it comes back', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const device = await connect(n2, persistentSession('adm-cluster-2'));
    await device.subscribeAsync('adm/cluster2/#', { qos: 1 });
    const told = new Promise<number | undefined>((resolve) =>
      device.once('disconnect', (packet) => resolve(packet.reasonCode)),
    );
    const res = await fetch(`${n1.http}/admin/v1/mqtt/sessions/adm-cluster-2`, { method: 'DELETE' });
    assert.equal(res.status, 204);
    assert.equal(await told, 0x98);
    const back = await connect(n1, persistentSession('adm-cluster-2'));
    clients.push(back);
    assert.equal(sessionPresent(back), false);
    const view = (await session(n1.http, 'adm-cluster-2')).body as SessionView;
    assert.equal(view.node, n1.id);
    assert.deepEqual(view.subscriptions, []);
  });
});
