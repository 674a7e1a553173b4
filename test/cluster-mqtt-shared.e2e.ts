import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { connect, Inbox } from './support/mqtt-helpers.js';
import { judgeGroup } from './support/nemesis-topics.js';
import { Device, streamTo } from './support/nemesis.js';

/** The sequence numbers (payloads) `inboxes` received on `topic`, each as often as it came. */
function numbers(inboxes: readonly Inbox[], prefix: string): number[] {
  return inboxes.flatMap((inbox) =>
    inbox.received.filter((m) => m.topic.startsWith(prefix)).map((m) => Number(m.payload)),
  );
}

/** Publishes probes on `topic` until `inboxes` together got one: the group is served on every node. */
async function untilServed(publisher: MqttClient, topic: string, inboxes: readonly Inbox[], qos: 0 | 1) {
  await until(
    'the shared group is served',
    async () => {
      if (numbers(inboxes, topic).includes(0)) return true;
      await publisher.publishAsync(topic, '0', { qos });
      return false;
    },
    8000,
  );
}

/** The MQTT connections `node` counts open (its broker_connections gauge for /mqtt). */
async function mqttConnections(node: BrokerNode): Promise<number> {
  const metrics = await (await fetch(`${node.http}/metrics`)).text();
  return [...metrics.matchAll(/^broker_connections\{[^}]*endpoint="\/mqtt"[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

describe('cluster: MQTT shared subscriptions across nodes', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(2);
  });
  after(() => cluster?.close());

  it('QoS 0: members on two nodes share the messages, each message reaches one of them; a node whose member left gets none', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const m1 = await connect(n1, { clientId: 'share0-a' });
    const m2 = await connect(n2, { clientId: 'share0-b' });
    const both = [new Inbox(m1), new Inbox(m2)];
    await m1.subscribeAsync('$share/g0/s0/#', { qos: 0 });
    await m2.subscribeAsync('$share/g0/s0/#', { qos: 0 });
    // A plain subscriber next to the group gets everything.
    const watcher = await connect(n2, { clientId: 'share0-watcher' });
    const all = new Inbox(watcher);
    await watcher.subscribeAsync('s0/#', { qos: 0 });
    // On the first member's node: NATS, not the publishing node, picks the member.
    const publisher = await connect(n1, { clientId: 'share0-publisher' });
    await untilServed(publisher, 's0/probe', both, 0);
    const total = 200;
    for (let n = 1; n <= total; n++) await publisher.publishAsync(`s0/${n % 7}`, String(n), { qos: 0 });
    await all.waitFor((m) => m.payload === String(total), 5000);
    await until(
      'every message reached the group',
      () => numbers(both, 's0/').filter((n) => n > 0).length >= total,
      5000,
    );
    // Nothing more may arrive (each message once): a short bounded wait, once every message arrived.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const got = numbers(both, 's0/').filter((n) => n > 0);
    assert.equal(got.length, total, 'each message once in the group');
    assert.equal(new Set(got).size, total);
    const [a, b] = both.map((inbox) => numbers([inbox], 's0/').filter((n) => n > 0).length);
    assert.ok((a ?? 0) > 0 && (b ?? 0) > 0, `both members take a share (${a}, ${b})`);

    // The member on n1 leaves: n1 leaves the queue, and n2's member gets every message.
    const openOnN1 = await mqttConnections(n1);
    await m1.endAsync();
    // n1 handled the DISCONNECT (and left the queue, on the NATS connection its later publishes take).
    await until(
      'n1 closed the connection of its member',
      async () => (await mqttConnections(n1)) < openOnN1,
      5000,
    );
    const before = numbers([both[1] as Inbox], 's0/').length;
    await until(
      'n2 alone serves the group',
      async () => {
        if (numbers([both[1] as Inbox], 's0/').length > before) return true;
        await publisher.publishAsync('s0/alone', String(total + 1), { qos: 0 });
        return false;
      },
      5000,
    );
    const from = numbers([both[1] as Inbox], 's0/').length;
    for (let n = 1; n <= 50; n++) await publisher.publishAsync('s0/alone', String(n), { qos: 0 });
    await until('all 50 at n2', () => numbers([both[1] as Inbox], 's0/').length === from + 50, 5000);
    assert.ok(from > before);
    await Promise.all([m2.endAsync(), watcher.endAsync(), publisher.endAsync()]);
  });

  it('QoS 1: members on A and B, A killed mid-stream: together they get every acknowledged message, repeats with DUP', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const doomed = await cluster.startNode();
    const onDoomed = await connect(doomed, { clientId: 'share1-a' });
    onDoomed.on('error', () => undefined);
    const survivor = await connect(n2, { clientId: 'share1-b' });
    const both = [new Inbox(onDoomed), new Inbox(survivor)];
    await onDoomed.subscribeAsync('$share/g1/s1/#', { qos: 1 });
    await survivor.subscribeAsync('$share/g1/s1/#', { qos: 1 });
    const publisher = await connect(n1, { clientId: 'share1-publisher' });
    await untilServed(publisher, 's1/probe', both, 1);

    const total = 300;
    const acked: number[] = [];
    for (let n = 1; n <= total; n++) {
      await publisher.publishAsync(`s1/${n % 5}`, String(n), { qos: 1 });
      acked.push(n);
      if (n === 100) await doomed.kill();
    }
    const missing = () => {
      const seen = new Set(numbers(both, 's1/'));
      return acked.filter((n) => !seen.has(n));
    };
    // What the dead node had in flight comes back to the survivor after the stream's ack wait.
    await until('every acknowledged message reached a member', () => missing().length === 0, 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: missing ${missing().join(' ')}\n${cluster.warnings()}`);
      },
    );
    const beforeKill = numbers([both[0] as Inbox], 's1/').filter((n) => n > 0);
    assert.ok(beforeKill.length > 0, 'the doomed member took a share before its node died');
    const atSurvivor = (both[1] as Inbox).received.filter((m) => m.topic.startsWith('s1/'));
    for (const m of atSurvivor) {
      if (beforeKill.includes(Number(m.payload)))
        assert.ok(m.packet.dup, `message ${m.payload}: a repeat without DUP`);
    }
    await Promise.all([survivor.endAsync(), publisher.endAsync()]);
  });

  it('QoS 1: persistent members whose connections drop every 300 ms, back on the other node: the group gets every acknowledged message, none twice without DUP', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    // Each arrival on a node with no member of the group there opens the group's consumer afresh.
    const members = [
      [n1, n2],
      [n2, n1],
    ].map(
      (nodes, i) =>
        new Device({
          clientId: `share2-m${i}`,
          nodes: () => nodes,
          filter: '$share/g2/s2',
          qos: 1,
          expirySec: 60,
          keepaliveSec: 10,
        }),
    );
    const [first, second] = members as [Device, Device];
    try {
      await second.subscribed();
      const publisher = await streamTo(first, n2, 'share2-publisher', 's2', 1);
      for (let drop = 0; drop < 15; drop++) {
        const now = () => performance.now();
        await until('both members are connected', () => members.every((m) => m.connectedAt(now())), 10_000);
        await new Promise((resolve) => setTimeout(resolve, 300));
        for (const member of members) member.dropConnection();
      }
      await publisher.stop();
      const group = () => judgeGroup(publisher.acked, members);
      await until('the group got every acknowledged message', () => group().lost.length === 0, 20_000).catch(
        (err: Error) => {
          throw new Error(`${err.message}: lost ${group().lost.join(' ')}\n${cluster.warnings()}`);
        },
      );
      assert.deepEqual(
        group().repeatsWithoutDup.map((n) => `${n}: ${group().copies(n)}`),
        [],
        'a message twice, the later copy without DUP',
      );
      assert.ok(first.connections.length > 10, 'the members moved');
    } finally {
      await Promise.all(members.map((member) => member.end()));
    }
  });
});
