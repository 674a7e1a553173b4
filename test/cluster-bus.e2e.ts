import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import WebSocket from 'ws';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { Subscription, transportClient } from './support/graphql-clients.js';
import { MessageQueue } from './support/message-queue.js';
import { connect as mqttConnect } from './support/mqtt-helpers.js';
import { Inbox } from './support/mqtt-helpers.js';
import { connectWampy, within } from './support/wamp-clients.js';
import { opened, refusedStatus } from './support/ws-helpers.js';

async function chatClient(node: BrokerNode, room: string): Promise<{ ws: WebSocket; queue: MessageQueue }> {
  const ws = new WebSocket(`${node.url}/chat`, 'chat.v1');
  const queue = new MessageQueue(ws);
  await opened(ws);
  assert.equal((await queue.json())['type'], 'welcome');
  ws.send(JSON.stringify({ type: 'join', room }));
  assert.deepEqual(await queue.json(), { type: 'joined', room });
  return { ws, queue };
}

/** Publishes `probe` until `received` shows it arrived: the subscription across nodes is then live. */
async function untilBridged(publish: () => void, received: () => boolean): Promise<void> {
  await until(
    'a probe crossed the nodes',
    () => {
      if (received()) return true;
      publish();
      return false;
    },
    5000,
  );
}

/** The chat messages in `queue` not yet taken, by their text. */
function texts(queue: MessageQueue): unknown[] {
  return queue.pending().map((raw) => (JSON.parse(raw) as Record<string, unknown>)['text']);
}

describe('cluster: the bus across three broker processes', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(3);
  });
  after(() => cluster?.close());

  it('chat rooms cross nodes, and each message arrives once', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const alice = await chatClient(n1, 'lobby');
    const bob = await chatClient(n2, 'lobby');
    await untilBridged(
      () => bob.ws.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'probe' })),
      () => alice.queue.pending().length > 0,
    );
    // Drain the probes on both sides: a marker sent after them arrives after them (one sender, in order).
    bob.ws.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'drained' }));
    await until(
      'the probes drained on both sides',
      () => texts(alice.queue).includes('drained') && texts(bob.queue).includes('drained'),
      5000,
    );
    alice.queue.clear();
    bob.queue.clear();
    bob.ws.send(JSON.stringify({ type: 'say', room: 'lobby', text: 'hello from n2' }));
    const got = await alice.queue.json();
    assert.equal(got['text'], 'hello from n2');
    assert.equal((await bob.queue.json())['text'], 'hello from n2', 'local delivery on the publishing node');
    // Nothing else may arrive: a short bounded wait, once the message arrived on both sides.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(alice.queue.pending(), [], 'nothing delivered twice');
    assert.deepEqual(bob.queue.pending(), [], 'no echo back from NATS');
    alice.ws.close();
    bob.ws.close();
  });

  it('MQTT QoS 0 from one node reaches MQTT, GraphQL and WAMP subscribers on the others, once each', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const subscriber = await mqttConnect(n1, { clientId: 'sub-n1' });
    const inbox = new Inbox(subscriber);
    await subscriber.subscribeAsync('sensors/+', { qos: 0 });
    const graphql = transportClient(`${n2.url}/graphql`);
    const topicEvents = new Subscription(
      graphql,
      'subscription { topic(filter: "sensors/#") { topic payload } }',
    );
    const wampy = await connectWampy(`${n3.url}/ws`);
    const wampEvents: unknown[] = [];
    await within(
      'wamp subscribe',
      wampy.subscribe('sensors.temp', (event: { argsList?: unknown[] }) => {
        wampEvents.push(event.argsList?.[0]);
      }),
    );
    const publisher = await mqttConnect(n3, { clientId: 'pub-n3' });

    await untilBridged(
      () => publisher.publish('sensors/probe', 'probe'),
      () => inbox.received.length > 0,
    );
    await topicEvents.next();
    // The probes still on their way arrive before a marker published after them (one publisher, in order).
    publisher.publish('sensors/drained', 'drained');
    await until('the probes drained', () => inbox.received.some((m) => m.topic === 'sensors/drained'), 5000);
    const before = inbox.received.length;
    const count = 20;
    for (let i = 1; i <= count; i++) publisher.publish('sensors/temp', String(i));
    await inbox.wait(before + count);
    const temps = inbox.received.slice(before).map((m) => m.payload);
    assert.deepEqual(
      temps,
      Array.from({ length: count }, (_, i) => String(i + 1)),
    );
    const graphqlTemps: string[] = [];
    while (graphqlTemps.length < count) {
      const result = await topicEvents.next();
      const topic = (result.data as { topic: { topic: string; payload: string } }).topic;
      if (topic.topic === 'sensors/temp') graphqlTemps.push(topic.payload);
    }
    assert.deepEqual(graphqlTemps, temps);
    await until('WAMP got every reading', () => wampEvents.length >= count, 3000);
    assert.deepEqual(wampEvents.map(String), temps);
    // Nothing else may arrive: a short bounded wait, once every subscriber got every reading.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(inbox.received.length, before + count, 'nothing delivered twice');
    assert.equal(wampEvents.length, count);

    topicEvents.stop();
    await graphql.dispose();
    await within('wamp disconnect', wampy.disconnect());
    await subscriber.endAsync();
    await publisher.endAsync();
  });

  it('a message goes only to the nodes whose clients subscribed to it', async () => {
    const idle = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const received = async (node: BrokerNode): Promise<number> => {
      const text = await (await fetch(`${node.http}/metrics`)).text();
      return Number(/^broker_cluster_bus_received_total (\d+)$/m.exec(text)?.[1]);
    };
    const subscriber = await mqttConnect(n2, { clientId: 'interested' });
    const inbox = new Inbox(subscriber);
    await subscriber.subscribeAsync('only/+', { qos: 0 });
    const publisher = await mqttConnect(n1, { clientId: 'only-publisher' });
    await untilBridged(
      () => publisher.publish('only/probe', 'probe'),
      () => inbox.received.length > 0,
    );
    const idleBefore = await received(idle);
    const before = inbox.received.length;
    for (let i = 0; i < 50; i++) publisher.publish('only/x', String(i));
    await inbox.wait(before + 50);
    assert.equal(await received(idle), idleBefore, 'the idle node took nothing from NATS');
    assert.ok(Number.isFinite(idleBefore));
    await subscriber.endAsync();
    await publisher.endAsync();
    await idle.stop();
    cluster.nodes.splice(cluster.nodes.indexOf(idle), 1);
  });

  it('garbage on every subject the nodes listen to is logged and dropped, never a crash', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const nc = await connect({ servers: cluster.nats.url });
    const p = cluster.name;
    const junk = ['not json', '{"k":"call"}', '[1,2', '{"identity":5}', ''];
    for (const body of junk) {
      for (const subject of [
        `${p}.bus.chat.lobby`,
        `${p}.bus.a./zz`,
        `${p}.bus-long`,
        `${p}.node.n1.wamp`,
        `${p}.node.n1.ocpp.call`,
        `${p}.notice.origins`,
        `${p}.notice.ocpp//claim`,
        `${p}.notice.ocpp.claim`,
      ]) {
        nc.publish(subject, body);
      }
    }
    const reply = await nc.request(`${p}.node.n1.admin.connections.list`, 'not json', { timeout: 2000 });
    assert.match(new TextDecoder().decode(reply.data), /"ok":false/);
    await nc.flush();
    await nc.close();
    for (const node of [n1, n2]) {
      const ready = await fetch(`${node.http}/health/ready`);
      assert.equal(ready.status, 200, `${node.id} still serves`);
    }
    await until('n1 logged the drops', () => /bus message from NATS dropped/.test(n1.log()), 3000);
    await until(
      'n1 logged the junk requests',
      () => /cluster message that is not JSON dropped/.test(n1.log()),
      3000,
    );
    // Traffic across nodes still flows.
    const alice = await chatClient(n1, 'after-junk');
    const bob = await chatClient(n2, 'after-junk');
    await untilBridged(
      () => bob.ws.send(JSON.stringify({ type: 'say', room: 'after-junk', text: 'still here' })),
      () => alice.queue.pending().length > 0,
    );
    alice.ws.close();
    bob.ws.close();
  });

  it('a node killed with SIGKILL mid-traffic: the survivors keep serving, nothing twice', async () => {
    const extra = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const survivor = await mqttConnect(n2, { clientId: 'survivor' });
    const survivorInbox = new Inbox(survivor);
    await survivor.subscribeAsync('load/#', { qos: 0 });
    const doomed = await mqttConnect(extra, { clientId: 'doomed' });
    const doomedInbox = new Inbox(doomed);
    doomed.on('error', () => undefined);
    await doomed.subscribeAsync('load/#', { qos: 0 });
    const publisher = await mqttConnect(n1, { clientId: 'load-publisher' });
    await untilBridged(
      () => publisher.publish('load/probe', 'probe'),
      () => survivorInbox.received.length > 0 && doomedInbox.received.length > 0,
    );
    // The probes still on their way arrive before a marker published after them (one publisher, in order).
    publisher.publish('load/drained', 'drained');
    await until(
      'the probes drained',
      () => survivorInbox.received.some((m) => m.topic === 'load/drained'),
      5000,
    );
    const start = survivorInbox.received.length;

    let sent = 0;
    const timer = setInterval(() => publisher.publish('load/seq', String(++sent)), 5);
    await until('traffic flowing to the doomed node', () => doomedInbox.received.length > 50, 5000);
    await extra.kill();
    const sentAtKill = sent;
    await until('traffic after the kill', () => sent > sentAtKill + 100, 5000);
    clearInterval(timer);
    await survivorInbox.wait(start + sent, 5000);
    const seqs = survivorInbox.received.slice(start).map((m) => Number(m.payload));
    assert.deepEqual(
      seqs,
      Array.from({ length: sent }, (_, i) => i + 1),
      'the survivor got every message once, in order',
    );
    // The killed node's clients are gone, and new clients are served by the survivors.
    const late = await mqttConnect(n1, { clientId: 'late' });
    await late.endAsync();
    await survivor.endAsync();
    await publisher.endAsync();
    doomed.end(true);
  });

  it('NATS restarted under traffic: local traffic goes on, new upgrades get 503, the nodes come back by themselves', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const local = await mqttConnect(n1, { clientId: 'local-sub' });
    const localInbox = new Inbox(local);
    await local.subscribeAsync('outage/#', { qos: 0 });
    const remote = await mqttConnect(n2, { clientId: 'remote-sub' });
    const remoteInbox = new Inbox(remote);
    await remote.subscribeAsync('outage/#', { qos: 0 });
    const publisher = await mqttConnect(n1, { clientId: 'outage-publisher' });
    await untilBridged(
      () => publisher.publish('outage/probe', 'probe'),
      () => remoteInbox.received.length > 0,
    );

    await cluster.nats.stop();
    await until('n1 noticed', () => n1.log().includes('NATS connection lost'), 5000);
    // Local delivery does not need NATS.
    const before = localInbox.received.length;
    publisher.publish('outage/during', 'local only');
    await localInbox.wait(before + 1);
    assert.equal(localInbox.received.at(-1)?.payload, 'local only');
    // A new connection would not see the cluster: refused with 503 until NATS is back.
    assert.equal(await refusedStatus(new WebSocket(`${n1.url}/mqtt`, 'mqtt')), 503);
    const ready = await fetch(`${n1.http}/health/ready`);
    assert.equal(ready.status, 503);
    assert.deepEqual(((await ready.json()) as { services: unknown }).services, { store: 'up', nats: 'down' });

    await cluster.nats.restart();
    await until('n1 reconnected', () => n1.log().includes('NATS connection restored'), 10_000);
    await until('n2 reconnected', () => n2.log().includes('NATS connection restored'), 10_000);
    // The log says so once, not once per reconnect attempt.
    assert.equal(n1.log().split('NATS connection lost').length - 1, 1);
    // Resubscribed by themselves: traffic crosses nodes again.
    const remoteBefore = remoteInbox.received.length;
    await untilBridged(
      () => publisher.publish('outage/after', 'back'),
      () => remoteInbox.received.length > remoteBefore,
    );
    assert.equal((await fetch(`${n1.http}/health/ready`)).status, 200);
    // Membership came back too: once every node has judged the others past the node timeout, nobody was
    // declared dead.
    await cluster.untilPastNodeTimeout();
    await cluster.assertFullMembership();
    const again = new WebSocket(`${n1.url}/mqtt`, 'mqtt');
    await opened(again);
    again.close();
    await local.endAsync();
    await remote.endAsync();
    await publisher.endAsync();
  });

  it('NATS back without its JetStream state: the nodes make their buckets again and see each other', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    await cluster.nats.stop();
    await until('n1 noticed', () => n1.log().split('NATS connection lost').length > 2, 5000);
    await cluster.nats.restart(true);
    await until('n1 reconnected', () => n1.log().split('NATS connection restored').length > 2, 10_000);
    // The nodes bucket is made again and every node beats into it, past the node timeout.
    await cluster.untilPastNodeTimeout();
    await cluster.assertFullMembership();
    const subscriber = await mqttConnect(n2, { clientId: 'after-wipe' });
    const inbox = new Inbox(subscriber);
    await subscriber.subscribeAsync('wiped/#', { qos: 0 });
    const publisher = await mqttConnect(n1, { clientId: 'after-wipe-pub' });
    await untilBridged(
      () => publisher.publish('wiped/x', 'x'),
      () => inbox.received.length > 0,
    );
    await subscriber.endAsync();
    await publisher.endAsync();
  });
});
