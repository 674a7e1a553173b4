import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connectAsync, type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { Inbox } from './support/mqtt-helpers.js';

function client(node: BrokerNode, clientId: string): Promise<MqttClient> {
  return connectAsync(`${node.url}/mqtt`, {
    clientId,
    reconnectPeriod: 0,
    connectTimeout: 3000,
    protocolVersion: 5,
  });
}

/** Subscribes a fresh client and returns what arrived as retained within a short wait. */
async function retainedAt(node: BrokerNode, filter: string): Promise<string[]> {
  const c = await client(node, `probe-${Math.random().toString(36).slice(2)}`);
  const inbox = new Inbox(c);
  await c.subscribeAsync(filter, { qos: 1 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  await c.endAsync();
  return inbox.received.filter((m) => m.packet.retain).map((m) => `${m.topic}=${m.payload}`);
}

describe('cluster: MQTT state across nodes', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(3);
  });
  after(() => cluster?.close());

  it('a retained message set on one node is there on every node, also after that node is killed', async () => {
    const doomed = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const publisher = await client(doomed, 'retainer');
    await publisher.publishAsync('status/pump', 'on', { qos: 1, retain: true });
    await publisher.publishAsync('status/valve', 'open', {
      qos: 1,
      retain: true,
      properties: { contentType: 'text/plain' },
    });
    await until('n1 has both', async () => (await retainedAt(n1, 'status/#')).length === 2, 3000);
    publisher.end(true);
    await doomed.kill();
    assert.deepEqual((await retainedAt(n2, 'status/#')).sort(), ['status/pump=on', 'status/valve=open']);

    // Cleared on one node: gone on the others.
    const clearer = await client(n2, 'clearer');
    await clearer.publishAsync('status/pump', '', { qos: 1, retain: true });
    await clearer.endAsync();
    await until('n1 saw the clear', async () => (await retainedAt(n1, 'status/#')).length === 1, 3000);
    assert.deepEqual(await retainedAt(n1, 'status/#'), ['status/valve=open']);
  });

  it('a node started later loads the retained messages before it serves', async () => {
    const [n1] = cluster.nodes as [BrokerNode];
    const publisher = await client(n1, 'late-retainer');
    await publisher.publishAsync('late/x', 'kept', { qos: 1, retain: true });
    await publisher.endAsync();
    const late = await cluster.startNode();
    assert.deepEqual(await retainedAt(late, 'late/#'), ['late/x=kept']);
  });
});
