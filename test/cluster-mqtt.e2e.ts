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

  it("a device's node killed: its will arrives once, its session resumes on another node", async () => {
    const doomed = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const watchers = [await client(n1, 'watcher-1'), await client(n2, 'watcher-2')];
    const inboxes = watchers.map((w) => new Inbox(w));
    for (const w of watchers) await w.subscribeAsync('wills/#', { qos: 0 });
    const device = await connectAsync(`${doomed.url}/mqtt`, {
      clientId: 'device-7',
      clean: false,
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
      will: { topic: 'wills/device-7', payload: Buffer.from('gone'), qos: 0, retain: false },
    });
    device.on('error', () => undefined);
    await device.subscribeAsync('cmd/device-7', { qos: 1 });
    // The bus needs the watchers' subscriptions on the other nodes before the will can reach them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await doomed.kill();
    for (const inbox of inboxes) await inbox.waitFor((m) => m.topic === 'wills/device-7', 8000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.deepEqual(
      inboxes.map((inbox) => inbox.received.filter((m) => m.topic === 'wills/device-7').length),
      [1, 1],
      'the will went out once',
    );

    const back = await connectAsync(`${n1.url}/mqtt`, {
      clientId: 'device-7',
      clean: false,
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
    });
    const backInbox = new Inbox(back);
    assert.equal(
      (back as unknown as { connackPacket?: { sessionPresent: boolean } }).connackPacket?.sessionPresent,
      true,
    );
    const commander = await client(n2, 'commander');
    await until(
      'the resumed subscription gets commands without a new SUBSCRIBE',
      () => {
        commander.publish('cmd/device-7', 'reboot', { qos: 1 });
        return backInbox.received.length > 0;
      },
      5000,
    );
    assert.equal(backInbox.received[0]?.payload, 'reboot');
    await back.endAsync();
    await commander.endAsync();
    for (const w of watchers) await w.endAsync();
  });

  it('a client id connecting on another node takes the session over (0x8E there); concurrent CONNECTs leave one', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const first = await client(n1, 'roamer');
    const takenOver = new Promise<number | undefined>((resolve) =>
      first.once('disconnect', (packet: { reasonCode?: number }) => resolve(packet.reasonCode)),
    );
    const second = await client(n2, 'roamer');
    assert.equal(await takenOver, 0x8e);
    await second.endAsync();

    const attempts = await Promise.allSettled(
      [n1, n2, n3].map((node) =>
        connectAsync(`${node.url}/mqtt`, {
          clientId: 'twin',
          reconnectPeriod: 0,
          connectTimeout: 3000,
          protocolVersion: 5,
        }),
      ),
    );
    const clients = attempts.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    for (const c of clients) c.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const connected = clients.filter((c) => c.connected);
    assert.equal(connected.length, 1, `${connected.length} of ${attempts.length} twins still connected`);
    for (const c of clients) c.end(true);
  });

  it('a node restarted under its id right after a SIGKILL: the old sessions are adopted, their wills go out once', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const id = 'phoenix';
    const first = await cluster.startNode({}, id);
    const watcher = await client(n2, 'phoenix-watcher');
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync('wills/#', { qos: 0 });
    const device = await connectAsync(`${first.url}/mqtt`, {
      clientId: 'phoenix-device',
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
      will: { topic: 'wills/phoenix-device', payload: Buffer.from('gone'), qos: 0, retain: false },
    });
    device.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await first.kill();
    // Back before the others time it out: the new process finds its predecessor's records.
    await cluster.startNode({}, id);
    await inbox.waitFor((m) => m.topic === 'wills/phoenix-device', 8000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal(inbox.received.filter((m) => m.topic === 'wills/phoenix-device').length, 1);
    // The session is still there to resume, on any node.
    const back = await connectAsync(`${n1.url}/mqtt`, {
      clientId: 'phoenix-device',
      clean: false,
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
    });
    assert.equal(
      (back as unknown as { connackPacket?: { sessionPresent: boolean } }).connackPacket?.sessionPresent,
      true,
    );
    await back.endAsync();
    await watcher.endAsync();
  });
});
