import { after, before, describe, it } from 'node:test';
import mqtt, { connectAsync, type MqttClient } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { connect, Inbox, persistentSession } from './support/mqtt-helpers.js';

/**
 * "Acknowledged means stored" as docs/cluster.md's durability section sets it up: three nats-servers in one
 * NATS cluster and every bucket and stream with three replicas, so a PUBACK means a majority of the
 * servers hold the message.
 */
describe('cluster: MQTT on a replicated JetStream (three nats-servers, three replicas)', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(2, { natsServers: 3, config: { cluster: { replicas: 3 } } });
  });
  after(() => cluster?.close());

  it('a nats-server killed mid-stream: every acknowledged QoS 1 message reaches the persistent subscriber', async (t) => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const options = persistentSession('r-subscriber');
    const away = await connectAsync(`${n1.url}/mqtt`, options);
    await away.subscribeAsync('r/#', { qos: 1 });
    await away.endAsync();

    const publisher = await connect(n2, { clientId: 'r-publisher', reconnectPeriod: 200 });
    publisher.on('error', () => undefined);
    t.after(() => publisher.end(true));
    const total = 200;
    const acked: number[] = [];
    let refusals = 0;
    let killedAt = 0;
    let recoveredAt = 0;
    for (let n = 1; n <= total; n++) {
      if (n === 60) {
        killedAt = performance.now();
        await cluster.nats.kill(0);
      }
      // As a device does: a publish refused (PUBACK 0x97 while JetStream elects new leaders) is sent again,
      // once the publisher is connected; one whose PUBACK does not come within its ack timeout too.
      await until(
        `message ${n} is acknowledged`,
        async () => {
          if (!publisher.connected) return false;
          const ok = await Promise.race([
            publisher.publishAsync(`r/${n % 3}`, String(n), { qos: 1 }).then(
              () => true,
              () => false,
            ),
            new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
          ]);
          if (!ok) refusals++;
          return ok;
        },
        20_000,
      );
      acked.push(n);
      if (killedAt > 0 && recoveredAt === 0) recoveredAt = performance.now();
    }
    t.diagnostic(
      `${refusals} refusals while JetStream recovered; the first acknowledgement came ` +
        `${Math.round(recoveredAt - killedAt)} ms after the kill`,
    );
    await cluster.nats.revive(0);

    // 0x88 while the revived server catches up: a device connects again.
    let back: MqttClient | null = null;
    let inbox: Inbox | null = null;
    await until(
      'the subscriber is back',
      async () => {
        // Once in, it reconnects as a device does: a node whose heartbeats fail while JetStream recovers
        // lets its sessions go (0x9C) before the others could count it dead.
        const attempt = mqtt.connect(`${n2.url}/mqtt`, { ...options, reconnectPeriod: 200 });
        const received = new Inbox(attempt);
        const ok = await new Promise<boolean>((resolve) => {
          attempt.once('connect', () => resolve(true));
          attempt.once('error', () => resolve(false));
          attempt.once('close', () => resolve(false));
        });
        t.after(() => attempt.end(true));
        if (!ok) attempt.end(true);
        else [back, inbox] = [attempt, received];
        return ok;
      },
      20_000,
    );
    const missing = () => {
      const seen = new Set((inbox as Inbox | null)?.received.map((m) => Number(m.payload)));
      return acked.filter((n) => !seen.has(n));
    };
    await until('every acknowledged message arrived', () => missing().length === 0, 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}: missing ${missing().join(' ')}\n${cluster.warnings()}`);
      },
    );
    await (back as MqttClient | null)?.endAsync();
    await publisher.endAsync();
  });

  it('a node that starts while every nats-server restarts waits for JetStream to elect its leaders', async () => {
    await cluster.nats.stop();
    // Back on their ports and disks, with no pause: JetStream answers 503 or nothing until the servers
    // have elected their leaders, and a third node starts into that.
    await Promise.all([0, 1, 2].map((i) => cluster.nats.revive(i)));
    const n3 = await cluster.startNode();
    const client = await connect(n3, { clientId: 'r-after-election' });
    await client.subscribeAsync('r/election', { qos: 1 });
    await client.publishAsync('r/election', 'stored', { qos: 1 });
    await client.endAsync();
  });
});
