import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttClient } from 'mqtt';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { openFeed, snapshotOf } from './support/dashboard-feed.js';
import { connect } from './support/mqtt-helpers.js';

// The MQTT module's "busiest topics" panel on the dashboard's feed and its admin route, against a real
// broker and real MQTT.js clients: the topics published to most on this node, busiest first, with their
// counts (test/cluster-busiest-topics.e2e.ts has them across a cluster's nodes).

const ADMIN = 'busiest-admin-token-0123456789abcdef';

interface Panel {
  id: string;
  title: string;
  rows: { key: string; cells: Record<string, unknown> }[];
}

describe('dashboard: the busiest MQTT topics on this node', () => {
  let broker: TestBroker;
  let base = '';
  const clients: MqttClient[] = [];

  before(async () => {
    broker = await startDefaultBroker({ admin: { tokens: [ADMIN] } });
    base = broker.url.replace(/^ws/, 'http');
  });

  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await broker.close();
  });

  async function panel(): Promise<Panel> {
    const feed = await openFeed(base, { Authorization: `Bearer ${ADMIN}` });
    assert.equal(feed.status, 200);
    const event = await feed.first;
    feed.close();
    const found = snapshotOf<{ panels: Panel[] }>(event).panels.find((p) => p.id === 'mqtt-busiest-topics');
    assert.ok(found, 'the panel is on the feed');
    return found;
  }

  it('is empty before anything is published', async () => {
    const empty = await panel();
    assert.match(empty.title, /on this node/);
    assert.deepEqual(empty.rows, []);
  });

  it('lists the topics clients published to, busiest first, with their counts and a rate', async () => {
    const one = await connect(broker, { clientId: 'busy-1' });
    const two = await connect(broker, { clientId: 'busy-2' });
    clients.push(one, two);
    const send = async (client: MqttClient, topic: string, times: number): Promise<void> => {
      // QoS 1: each is counted before its PUBACK.
      for (let i = 0; i < times; i++) await client.publishAsync(topic, `m${i}`, { qos: 1 });
    };
    await send(one, 'busy/a', 7);
    await send(two, 'busy/b', 12);
    await send(one, 'busy/c', 2);
    await send(two, 'busy/a', 3);
    const { rows } = await panel();
    assert.deepEqual(
      rows.map((r) => [r.key, r.cells['messages'], r.cells['overcount']]),
      [
        ['busy/b', 12, null],
        ['busy/a', 10, null],
        ['busy/c', 2, null],
      ],
    );
    for (const row of rows) assert.match(String(row.cells['rate']), /^\d+\.\d+$/);

    // The admin API answers the same, with no node on a single broker, and documents itself.
    const res = await fetch(`${base}/admin/v1/mqtt/topics/busiest`, {
      headers: { Authorization: `Bearer ${ADMIN}` },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('broker-missing-nodes'), null);
    const view = (await res.json()) as {
      topics: { topic: string; messages: number; overcount: number; nodes: string[] }[];
      missing: string[];
    };
    assert.deepEqual(view.missing, []);
    assert.deepEqual(
      view.topics.map((t) => [t.topic, t.messages, t.overcount, t.nodes]),
      [
        ['busy/b', 12, 0, []],
        ['busy/a', 10, 0, []],
        ['busy/c', 2, 0, []],
      ],
    );
    const unauthorized = await fetch(`${base}/admin/v1/mqtt/topics/busiest`);
    assert.equal(unauthorized.status, 401);
    const doc = (await (await fetch(`${base}/admin/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    assert.ok(doc.paths['/admin/v1/mqtt/topics/busiest'], 'the route is in the OpenAPI document');
  });
});
