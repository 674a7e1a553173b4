import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { connect, persistentSession, startMqttBroker } from './support/mqtt-helpers.js';
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
});
