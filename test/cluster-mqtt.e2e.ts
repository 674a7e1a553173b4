import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { connect as natsConnect } from '@nats-io/transport-node';
import mqtt, { connectAsync, type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { freePort } from './support/free-port.js';
import { connect, Inbox, MQTT_ENDPOINT, persistentSession, sessionPresent } from './support/mqtt-helpers.js';
import { PAHO_CHECKS, runPaho } from './support/paho.js';
import { RawMqtt } from './support/raw-mqtt.js';

/** Publishes QoS 1 probes until `subscriber` gets one: its subscription's stream consumer is then in place. */
async function untilFedByStream(subscriber: MqttClient, publisher: MqttClient, topic: string): Promise<void> {
  const ready = new Promise<void>((resolve) => subscriber.once('message', () => resolve()));
  await until(
    'the subscription is fed by the stream',
    async () => {
      await publisher.publishAsync(topic, 'warm', { qos: 1 });
      return Promise.race([
        ready.then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 200)),
      ]);
    },
    5000,
  );
}

/** Subscribes a fresh client and returns what arrived as retained. */
async function retainedAt(node: BrokerNode, filter: string): Promise<string[]> {
  const c = await connect(node, { clientId: `probe-${Math.random().toString(36).slice(2)}` });
  const inbox = new Inbox(c);
  await c.subscribeAsync(filter, { qos: 1 });
  // The retained messages go out right after the SUBACK, before the node reads the next packet: the
  // SUBACK of a second SUBSCRIBE comes after them.
  await c.subscribeAsync(`fence/${Math.random().toString(36).slice(2)}`, { qos: 0 });
  await c.endAsync();
  return inbox.received.filter((m) => m.packet.retain).map((m) => `${m.topic}=${m.payload}`);
}

/** How many consumers of the cluster's MQTT stream read a subject ending in `suffix`. */
async function consumersOf(cluster: TestCluster, suffix: string): Promise<number> {
  return (await withStream(cluster, (jsm, stream) => jsm.consumers.list(stream).next())).filter((c) =>
    c.config.filter_subject?.endsWith(suffix),
  ).length;
}

/** Deletes them behind the broker's back; returns how many there were. */
async function deleteConsumers(cluster: TestCluster, suffix: string): Promise<number> {
  return withStream(cluster, async (jsm, stream) => {
    const doomed = (await jsm.consumers.list(stream).next()).filter((c) =>
      c.config.filter_subject?.endsWith(suffix),
    );
    for (const consumer of doomed) await jsm.consumers.delete(stream, consumer.name);
    return doomed.length;
  });
}

async function withStream<T>(
  cluster: TestCluster,
  use: (jsm: JetStreamManager, stream: string) => Promise<T>,
): Promise<T> {
  const nc = await natsConnect({ servers: cluster.nats.url });
  try {
    return await use(await jetstreamManager(nc), `${cluster.name}-mqtt-msgs`);
  } finally {
    await nc.close();
  }
}

/**
 * Publishes probes on `topic` from a client on `node` until each of `inboxes` got one: their
 * subscriptions are then live on the bus for what that node publishes.
 */
async function untilBusReaches(node: BrokerNode, topic: string, inboxes: readonly Inbox[]): Promise<void> {
  const prober = await connect(node, { clientId: `prober-${Math.random().toString(36).slice(2)}` });
  prober.on('error', () => undefined);
  await until(
    `a probe on ${topic} from ${node.id} reached every subscriber`,
    () => {
      if (inboxes.every((inbox) => inbox.received.some((m) => m.topic === topic))) return true;
      prober.publish(topic, 'probe');
      return false;
    },
    5000,
  );
  prober.end(true);
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
    const publisher = await connect(doomed, { clientId: 'retainer' });
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
    const clearer = await connect(n2, { clientId: 'clearer' });
    await clearer.publishAsync('status/pump', '', { qos: 1, retain: true });
    await clearer.endAsync();
    await until('n1 saw the clear', async () => (await retainedAt(n1, 'status/#')).length === 1, 3000);
    assert.deepEqual(await retainedAt(n1, 'status/#'), ['status/valve=open']);
  });

  it('a node started later loads the retained messages before it serves', async () => {
    const [n1] = cluster.nodes as [BrokerNode];
    const publisher = await connect(n1, { clientId: 'late-retainer' });
    await publisher.publishAsync('late/x', 'kept', { qos: 1, retain: true });
    await publisher.endAsync();
    const late = await cluster.startNode();
    assert.deepEqual(await retainedAt(late, 'late/#'), ['late/x=kept']);
  });

  it("a device's node killed: its will arrives once, its session resumes on another node", async () => {
    const doomed = await cluster.startNode();
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const watchers = [
      await connect(n1, { clientId: 'watcher-1' }),
      await connect(n2, { clientId: 'watcher-2' }),
    ];
    const inboxes = watchers.map((w) => new Inbox(w));
    for (const w of watchers) await w.subscribeAsync('wills/#', { qos: 0 });
    const device = await connectAsync(`${doomed.url}/mqtt`, {
      clientId: 'device-7',
      clean: false,
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
      will: { topic: 'wills/device-7', payload: Buffer.from('gone'), qos: 0, retain: false },
      // The node that adopts the session waits 1.5 keep-alives (3 s) for the client to come back first.
      keepalive: 2,
    });
    device.on('error', () => undefined);
    await device.subscribeAsync('cmd/device-7', { qos: 1 });
    // The bus needs the watchers' subscriptions on the other nodes before the will can reach them.
    await untilBusReaches(doomed, 'wills/probe', inboxes);
    await doomed.kill();
    for (const inbox of inboxes) await inbox.waitFor((m) => m.topic === 'wills/device-7', 8000);
    // No second will may follow: a short bounded wait, once both watchers got the first.
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
    assert.equal(sessionPresent(back), true);
    const commander = await connect(n2, { clientId: 'commander' });
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
    const first = await connect(n1, { clientId: 'roamer' });
    const takenOver = new Promise<number | undefined>((resolve) =>
      first.once('disconnect', (packet: { reasonCode?: number }) => resolve(packet.reasonCode)),
    );
    const second = await connect(n2, { clientId: 'roamer' });
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
    // Each twin that was taken over gets its DISCONNECT: at most one stays.
    await until('the takeovers settled', () => clients.filter((c) => c.connected).length <= 1, 5000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: ${clients.filter((c) => c.connected).length} twins still connected`);
      },
    );
    const connected = clients.filter((c) => c.connected);
    assert.equal(connected.length, 1, `${connected.length} of ${attempts.length} twins still connected`);
    for (const c of clients) c.end(true);
  });

  it('a CONNECT that takes a session from another node and goes away before its CONNACK leaves the session, not nothing', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const options = persistentSession('impatient');
    const device = await connectAsync(`${n1.url}/mqtt`, options);
    device.on('error', () => undefined);
    await device.subscribeAsync('impatient/in', { qos: 1 });
    // A device that gave up waiting for its CONNACK: the claim across the nodes goes on without it.
    const gone = await RawMqtt.open(`${n2.url}/mqtt`);
    gone.send({
      cmd: 'connect',
      protocolVersion: 5,
      clientId: 'impatient',
      clean: false,
      keepalive: 0,
      properties: { sessionExpiryInterval: 300 },
    });
    gone.ws.terminate();
    await until('the first connection is taken over', () => !device.connected, 5000);
    const back = await connectAsync(`${n1.url}/mqtt`, options);
    assert.equal(sessionPresent(back), true);
    const inbox = new Inbox(back);
    const publisher = await connect(n2, { clientId: 'impatient-publisher' });
    await publisher.publishAsync('impatient/in', 'still subscribed', { qos: 1 });
    await inbox.waitFor((m) => m.payload === 'still subscribed', 5000);
    await back.endAsync();
    await publisher.endAsync();
  });

  it('a node restarted under its id right after a SIGKILL: the old sessions are adopted, their wills go out once', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const id = 'phoenix';
    const first = await cluster.startNode({}, id);
    const watcher = await connect(n2, { clientId: 'phoenix-watcher' });
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync('wills/#', { qos: 0 });
    const device = await connectAsync(`${first.url}/mqtt`, {
      clientId: 'phoenix-device',
      reconnectPeriod: 0,
      protocolVersion: 5,
      properties: { sessionExpiryInterval: 300 },
      will: { topic: 'wills/phoenix-device', payload: Buffer.from('gone'), qos: 0, retain: false },
      // The node that adopts the session waits 1.5 keep-alives (3 s) for the client to come back first.
      keepalive: 2,
    });
    device.on('error', () => undefined);
    // The bus needs the watcher's subscription before the will can reach it.
    await untilBusReaches(first, 'wills/probe', [inbox]);
    await first.kill();
    // Back before the others time it out: the new process finds its predecessor's records.
    await cluster.startNode({}, id);
    await inbox.waitFor((m) => m.topic === 'wills/phoenix-device', 8000);
    // No second will may follow (from a node that counted the old process dead and adopted its sessions
    // too): a bounded wait, past the node timeout, once the first arrived.
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
    assert.equal(sessionPresent(back), true);
    await back.endAsync();
    await watcher.endAsync();
  });

  it('QoS 1 from node A to a persistent subscriber on B; B killed mid-stream, the subscriber back on C: every PUBACKed message arrives, repeats with DUP', async () => {
    const [n1, , n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const doomed = await cluster.startNode();
    const subscriberOptions = persistentSession('q1-subscriber');
    const got: { n: number; dup: boolean }[] = [];
    const record = (c: MqttClient) =>
      c.on('message', (_topic, payload, packet) =>
        got.push({ n: Number(payload.toString()), dup: packet.dup }),
      );
    const first = await connectAsync(`${doomed.url}/mqtt`, subscriberOptions);
    first.on('error', () => undefined);
    record(first);
    await first.subscribeAsync('q1/#', { qos: 1 });
    // The stream's consumer exists once a message published now reaches the subscriber.
    const publisher = await connect(n1, { clientId: 'q1-publisher' });
    await until(
      'the subscription is fed by the stream',
      async () => {
        await publisher.publishAsync('q1/probe', '0', { qos: 1 });
        return got.some((m) => m.n === 0);
      },
      5000,
    );

    const total = 300;
    const acked: number[] = [];
    let killed = false;
    const publishing = (async () => {
      for (let n = 1; n <= total; n++) {
        await publisher.publishAsync('q1/seq', String(n), { qos: 1 });
        acked.push(n);
        if (n === 100) {
          killed = true;
          await doomed.kill();
        }
      }
    })();
    await until('the node is killed', () => killed, 10_000);
    // Until the dead node's death is confirmed, its sessions are not taken (0x88): a device retries.
    let second: MqttClient | null = null;
    await until(
      'the subscriber reconnects on another node',
      async () => {
        // Listening before the CONNACK: the stream's backlog follows it at once.
        const attempt = mqtt.connect(`${n3.url}/mqtt`, subscriberOptions);
        record(attempt);
        const ok = await new Promise<boolean>((resolve) => {
          attempt.once('connect', () => resolve(true));
          attempt.once('error', () => resolve(false));
          attempt.once('close', () => resolve(false));
        });
        if (ok) second = attempt;
        else attempt.end(true);
        return ok;
      },
      10_000,
    );
    await publishing;
    const missing = () => {
      const seen = new Set(got.map((m) => m.n));
      return acked.filter((n) => !seen.has(n));
    };
    await until('every acknowledged message arrived', () => missing().length === 0, 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: missing ${missing().join(' ')}\n${cluster.warnings()}`);
      },
    );
    const copies = new Map<number, boolean[]>();
    // Probes (0) are separate publishes; the sequence numbers are one publish each.
    for (const m of got.filter((g) => g.n > 0)) copies.set(m.n, [...(copies.get(m.n) ?? []), m.dup]);
    for (const [n, dups] of copies) {
      assert.ok(
        dups.slice(1).every((dup) => dup),
        `message ${n}: a repeat without DUP (${dups.join(',')})`,
      );
    }
    assert.equal(acked.length, total);
    await (second as MqttClient | null)?.endAsync();
    await publisher.endAsync();
  });

  it("the publisher's node killed right after a PUBACK: the message still reaches the subscriber", async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const options = persistentSession('q2-subscriber');
    const subscriber = await connectAsync(`${n1.url}/mqtt`, options);
    await subscriber.subscribeAsync('q2/x', { qos: 1 });
    const warm = await connect(n2, { clientId: 'q2-warm' });
    await untilFedByStream(subscriber, warm, 'q2/x');
    await warm.endAsync();
    // The subscriber is away: the message can only wait in the stream.
    await subscriber.endAsync();
    const publisherNode = await cluster.startNode();
    const publisher = await connect(publisherNode, { clientId: 'q2-publisher' });
    await publisher.publishAsync('q2/x', 'kept', { qos: 1 });
    await publisherNode.kill();
    const back = await connectAsync(`${n2.url}/mqtt`, options);
    const inbox = new Inbox(back);
    await inbox.waitFor((m) => m.payload === 'kept', 10_000);
    await back.endAsync();
  });

  it('a persistent subscriber that subscribes again on its return (as most clients do) still gets what waited for it', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const options = persistentSession('q3-subscriber');
    const first = await connectAsync(`${n1.url}/mqtt`, options);
    await first.subscribeAsync('q3/x', { qos: 1 });
    const warm = await connect(n2, { clientId: 'q3-warm' });
    await untilFedByStream(first, warm, 'q3/x');
    await first.endAsync();
    for (let i = 1; i <= 5; i++) await warm.publishAsync('q3/x', `away-${i}`, { qos: 1 });
    const back = mqtt.connect(`${n2.url}/mqtt`, options);
    const inbox = new Inbox(back);
    await new Promise((resolve) => back.once('connect', resolve));
    await back.subscribeAsync('q3/x', { qos: 1 });
    for (let i = 1; i <= 5; i++) await inbox.waitFor((m) => m.payload === `away-${i}`, 8000);
    await back.endAsync();
    await warm.endAsync();
  });

  it('the session queue limit holds across the nodes: back after 20 messages, a session limited to 5 gets the newest 5', async () => {
    const [n1] = cluster.nodes as [BrokerNode];
    const limited = await cluster.startNode({}, 'limited', {
      mqtt: { sysIntervalSec: 0, maxQueuedMessages: 5 },
    });
    const options = persistentSession('q4-subscriber');
    const first = await connectAsync(`${limited.url}/mqtt`, options);
    await first.subscribeAsync('q4/x', { qos: 1 });
    const publisher = await connect(n1, { clientId: 'q4-publisher' });
    await untilFedByStream(first, publisher, 'q4/x');
    await first.endAsync();
    for (let i = 1; i <= 20; i++) await publisher.publishAsync('q4/x', String(i), { qos: 1 });
    const back = mqtt.connect(`${limited.url}/mqtt`, options);
    const inbox = new Inbox(back);
    await inbox.waitFor((m) => m.payload === '20', 8000);
    // Nothing more may arrive: a short bounded wait, once the newest arrived.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      inbox.received.map((m) => m.payload),
      ['16', '17', '18', '19', '20'],
    );
    await back.endAsync();
    await publisher.endAsync();
  });

  it("a stream consumer deleted behind the broker's back is made again: the subscriber goes on getting QoS 1", async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const subscriber = await connectAsync(`${n1.url}/mqtt`, persistentSession('q5-subscriber'));
    const inbox = new Inbox(subscriber);
    await subscriber.subscribeAsync('q5/x', { qos: 1 });
    const publisher = await connect(n2, { clientId: 'q5-publisher' });
    await untilFedByStream(subscriber, publisher, 'q5/x');
    assert.equal(await deleteConsumers(cluster, '.q5.x'), 1);
    await until(
      'the consumer is there again',
      async () => (await consumersOf(cluster, '.q5.x')) === 1,
      10_000,
    );
    for (let i = 1; i <= 5; i++) await publisher.publishAsync('q5/x', `after-${i}`, { qos: 1 });
    for (let i = 1; i <= 5; i++) await inbox.waitFor((m) => m.payload === `after-${i}`, 8000);
    await subscriber.endAsync();
    await publisher.endAsync();
  });

  it('a session record that does not parse is no session: the client connects without one, and the record is whole again', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const key = Buffer.from('garbled').toString('base64url');
    const nc = await natsConnect({ servers: cluster.nats.url });
    try {
      const kv = await new Kvm(nc).open(`${cluster.name}-mqtt-sessions`);
      for (const junk of ['{not json', '{"node":7}', '[]']) {
        await kv.put(key, junk);
        const device = await connectAsync(`${n1.url}/mqtt`, persistentSession('garbled'));
        assert.equal(sessionPresent(device), false, junk);
        await device.subscribeAsync('garbled/in', { qos: 1 });
        await device.endAsync();
        // The record the broker wrote resumes on another node.
        const back = await connectAsync(`${n2.url}/mqtt`, persistentSession('garbled'));
        assert.equal(sessionPresent(back), true, junk);
        await back.endAsync();
      }
    } finally {
      await nc.close();
    }
  });

  it('Debian paho, MQTT 3.1.1 and 5, its clients on two nodes: pub/sub at QoS 0/1/2, retained, will and a persistent session', async () => {
    // paho 1.x sends `Origin: https://<host>:<port>` even over ws://: the nodes list theirs, so their
    // ports are chosen before they start.
    const ports = [await freePort(), await freePort()] as const;
    const config = {
      endpoints: [{ ...MQTT_ENDPOINT, origins: ports.map((port) => `https://127.0.0.1:${port}`) }],
    };
    const a = await cluster.startNode({ PORT: String(ports[0]) }, 'paho-a', config);
    const b = await cluster.startNode({ PORT: String(ports[1]) }, 'paho-b', config);
    for (const version of ['311', '5'] as const) {
      const { code, output, checks } = await runPaho(a.port, version, b.port);
      assert.equal(code, 0, `MQTT ${version}: ${output}`);
      assert.deepEqual(checks, PAHO_CHECKS);
    }
  });

  it("a gone node's persistent session takes its stream consumers along when it expires, or when its client starts clean", async () => {
    const [n1] = cluster.nodes as [BrokerNode];
    const doomed = await cluster.startNode();
    const expiring = await connectAsync(`${doomed.url}/mqtt`, {
      ...persistentSession('q6-expiring'),
      properties: { sessionExpiryInterval: 3 },
      // Its expiry runs from 1.5 keep-alives after the node's death (the client may only be cut off).
      keepalive: 2,
    });
    await expiring.subscribeAsync('q6/expiring', { qos: 1 });
    const restarting = await connectAsync(`${doomed.url}/mqtt`, persistentSession('q6-clean'));
    await restarting.subscribeAsync('q6/clean', { qos: 1 });
    // SUBACK came once the consumers existed.
    assert.equal(await consumersOf(cluster, '.q6.expiring'), 1);
    assert.equal(await consumersOf(cluster, '.q6.clean'), 1);
    for (const c of [expiring, restarting]) c.on('error', () => undefined);
    await doomed.kill();
    // 0x88 until the death is confirmed; then the clean start ends the old session.
    let fresh: MqttClient | null = null;
    await until(
      'the clean start is accepted',
      async () => {
        fresh = await connectAsync(`${n1.url}/mqtt`, { ...persistentSession('q6-clean'), clean: true }).catch(
          () => null,
        );
        return fresh !== null;
      },
      10_000,
    );
    await until(
      'both sessions took their consumers along',
      async () =>
        (await consumersOf(cluster, '.q6.expiring')) + (await consumersOf(cluster, '.q6.clean')) === 0,
      15_000,
    );
    await (fresh as MqttClient | null)?.endAsync();
  });

  it('QoS 1 is stored in the stream only where a stream consumer reads its topic; clean sessions get it through the bus alone', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const lastSeq = () =>
      withStream(cluster, async (jsm, stream) => (await jsm.streams.info(stream)).state.last_seq);
    const clean = await connect(n2, { clientId: 'q7-clean' });
    const cleanInbox = new Inbox(clean);
    await clean.subscribeAsync('q7/x', { qos: 1 });
    const publisher = await connect(n1, { clientId: 'q7-publisher' });
    const before = await lastSeq();
    for (let i = 1; i <= 5; i++) await publisher.publishAsync('q7/x', `clean-${i}`, { qos: 1 });
    await cleanInbox.waitFor((m) => m.payload === 'clean-5', 5000);
    assert.equal(await lastSeq(), before, 'nothing stored for clean sessions');
    // A persistent subscriber's consumer: from its SUBACK on, every node stores what it reads.
    const persistent = await connectAsync(`${n2.url}/mqtt`, persistentSession('q7-persistent'));
    const persistentInbox = new Inbox(persistent);
    await persistent.subscribeAsync('q7/#', { qos: 1 });
    // Its SUBACK waited until every node's index had its consumer: the very next publish is stored.
    const seq = await lastSeq();
    await publisher.publishAsync('q7/x', 'probe', { qos: 1 });
    assert.equal(await lastSeq(), seq + 1, 'stored on the publishing node right after the SUBACK');
    await persistent.endAsync();
    await publisher.publishAsync('q7/x', 'kept', { qos: 1 });
    const back = await connectAsync(`${n1.url}/mqtt`, persistentSession('q7-persistent'));
    const backInbox = new Inbox(back);
    await backInbox.waitFor((m) => m.payload === 'kept', 8000);
    assert.ok(persistentInbox.received.length > 0);
    await Promise.all([back.endAsync(), clean.endAsync(), publisher.endAsync()]);
  });

  it('UNSUBSCRIBE then SUBSCRIBE again at once: the stream still keeps what the subscription is owed while its client is away', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const options = persistentSession('q8-subscriber');
    const first = await connectAsync(`${n1.url}/mqtt`, options);
    await first.subscribeAsync('q8/x', { qos: 1 });
    // Each UNSUBSCRIBE deletes the consumer (one name for the filter, made again by the SUBSCRIBE after it),
    // and the answers come back while the loop goes on: JetStream's API audit advisories tell them.
    const durables = await withStream(cluster, async (jsm, stream) =>
      (await jsm.consumers.list(stream).next())
        .filter((c) => c.config.filter_subject?.endsWith('.q8.x'))
        .map((c) => `$JS.API.CONSUMER.DELETE.${stream}.${c.name}`),
    );
    assert.equal(durables.length, 1);
    const nc = await natsConnect({ servers: cluster.nats.url });
    let deletions = 0;
    const audit = nc.subscribe('$JS.EVENT.ADVISORY.API', {
      callback: (_err, msg) => {
        if (durables.includes(String(msg.json<{ subject?: unknown }>().subject))) deletions++;
      },
    });
    await nc.flush();
    for (let i = 0; i < 3; i++) {
      await first.unsubscribeAsync('q8/x');
      await first.subscribeAsync('q8/x', { qos: 1 });
    }
    // The deletions of the old consumers settle; the entry of the last one must stay.
    await until('JetStream answered the three deletions', () => deletions >= 3, 5000).finally(() => {
      audit.unsubscribe();
      return nc.close();
    });
    await first.endAsync();
    const publisher = await connect(n2, { clientId: 'q8-publisher' });
    await publisher.publishAsync('q8/x', 'owed', { qos: 1 });
    const back = await connectAsync(`${n2.url}/mqtt`, options);
    await new Inbox(back).waitFor((m) => m.payload === 'owed', 8000);
    await Promise.all([back.endAsync(), publisher.endAsync()]);
  });

  /**
   * A QoS 2 publisher gets PUBREC on `from`, drops before its PUBREL (`drop`: its connection ends, or
   * its node is killed), and comes back on n2 with the PUBLISH again (DUP) and then PUBREL.
   */
  async function qos2PublisherMoves(prefix: string, from: BrokerNode, drop: (raw: RawMqtt) => Promise<void>) {
    const n2 = cluster.nodes[1] as BrokerNode;
    const watcher = await connect(n2, { clientId: `${prefix}-watcher` });
    const inbox = new Inbox(watcher);
    await watcher.subscribeAsync(`${prefix}/#`, { qos: 2 });
    await untilBusReaches(from, `${prefix}/probe`, [inbox]);
    const session = {
      clientId: `${prefix}-publisher`,
      clean: false,
      properties: { sessionExpiryInterval: 300 },
    };
    const first = await RawMqtt.connected(`${from.url}/mqtt`, session);
    const publish = (dup: boolean) =>
      ({
        cmd: 'publish',
        topic: `${prefix}/x`,
        payload: Buffer.from('once'),
        qos: 2,
        messageId: 7,
        dup,
        retain: false,
      }) as const;
    first.send(publish(false));
    assert.equal((await first.next('pubrec')).messageId, 7);
    await drop(first);
    const back = await RawMqtt.connected(`${n2.url}/mqtt`, session);
    back.send(publish(true));
    const again = await back.next('pubrec', 8000);
    assert.deepEqual([again.messageId, again.reasonCode ?? 0], [7, 0]);
    back.send({ cmd: 'pubrel', messageId: 7 });
    const complete = await back.next('pubcomp');
    assert.deepEqual([complete.messageId, complete.reasonCode ?? 0], [7, 0], 'the id was known on n2');
    // A later message arrives: nothing before it but the one copy.
    back.send({
      cmd: 'publish',
      topic: `${prefix}/y`,
      payload: Buffer.from('after'),
      qos: 1,
      messageId: 8,
      dup: false,
      retain: false,
    });
    await back.next('puback');
    await inbox.waitFor((m) => m.topic === `${prefix}/y`);
    assert.deepEqual(
      inbox.received.filter((m) => m.topic === `${prefix}/x`).map((m) => m.payload),
      ['once'],
    );
    back.ws.close();
    await watcher.endAsync();
  }

  it('a QoS 2 publisher moving nodes between PUBREC and PUBREL: its resend is acknowledged, not routed again; its PUBREL completes', async () => {
    await qos2PublisherMoves('q9', cluster.nodes[0] as BrokerNode, async (raw) => void raw.ws.terminate());
  });

  it("a QoS 2 publisher's node killed right after its PUBREC: the record already holds the id, the resend is not routed again", async () => {
    const doomed = await cluster.startNode();
    await qos2PublisherMoves('q10', doomed, () => doomed.kill());
  });
});
