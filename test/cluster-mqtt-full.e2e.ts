import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect as natsConnect } from '@nats-io/transport-node';
import { connectAsync } from 'mqtt';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { persistentSession } from './support/mqtt-helpers.js';

/** The filter subjects of the consumers of the cluster's MQTT stream. */
async function consumerFilters(cluster: TestCluster): Promise<string[]> {
  const nc = await natsConnect({ servers: cluster.nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    const consumers = await jsm.consumers.list(`${cluster.name}-mqtt-msgs`).next();
    return consumers.map((c) => c.config.filter_subject ?? '');
  } finally {
    await nc.close();
  }
}

describe('cluster: MQTT when JetStream is full', () => {
  let cluster: TestCluster;

  before(async () => {
    // The stream may hold 1 MiB of the server's 4: a held backlog fills it, the buckets keep their room.
    cluster = await TestCluster.start(2, {
      maxFileStore: 4 * 1024 * 1024,
      config: { mqtt: { cluster: { streamMaxBytes: 1024 * 1024 } } },
    });
  });
  after(() => cluster?.close());

  it('a QoS 1 publish that cannot be stored gets PUBACK 0x97, never an acknowledgement; the cluster stays whole', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    // A persistent subscriber that is away keeps every message in the stream.
    const holder = await connectAsync(`${n1.url}/mqtt`, persistentSession('full-holder'));
    await holder.subscribeAsync('full/#', { qos: 1 });
    // Its stream consumers (full, full.>) are there: the publishes below are stored for it.
    await until(
      'the stream has the subscription consumers',
      async () => {
        const filters = await consumerFilters(cluster);
        return filters.some((f) => f.endsWith('.full')) && filters.some((f) => f.endsWith('.full.>'));
      },
      5000,
    );
    await holder.endAsync();

    const publisher = await connectAsync(`${n2.url}/mqtt`, {
      clientId: 'full-publisher',
      reconnectPeriod: 0,
      protocolVersion: 5,
    });
    const payload = Buffer.alloc(100 * 1024, 7);
    let refusal: { reasonCode?: number } | null = null;
    let acked = 0;
    for (let i = 0; i < 60 && refusal === null; i++) {
      await publisher.publishAsync('full/x', payload, { qos: 1 }).then(
        () => void acked++,
        (err: { code?: number }) => (refusal = { reasonCode: err.code }),
      );
    }
    assert.ok(refusal !== null, `every one of ${acked} publishes was acknowledged: the store never filled`);
    assert.equal((refusal as { reasonCode?: number }).reasonCode, 0x97);
    assert.ok(acked > 0, 'the first messages fitted');
    // The publisher's node raises its alarm at its next check (every 5 s): a gauge and a warning.
    const alarmed = () =>
      n2
        .logLines()
        .find((line) => line['alarm'] === 'mqtt-stream-full' && line['msg'] !== 'alarm not judged');
    await until('the stream-full alarm raised', () => alarmed() !== undefined, 10_000);
    assert.match(
      String(alarmed()?.['detail']),
      /^[1-9]\d* writes refused since the last check, \d+ of its 1048576 bytes held$/,
    );
    assert.match(
      await (await fetch(`${n2.http}/metrics`)).text(),
      /broker_alarm_active\{alarm="mqtt-stream-full"\} 1/,
    );
    // The heartbeats live in memory: they go on, and once every node has judged the others past the node
    // timeout, nobody was declared dead; the nodes still serve.
    await cluster.untilPastNodeTimeout();
    await cluster.assertFullMembership();
    // What was acknowledged is delivered.
    const back = await connectAsync(`${n2.url}/mqtt`, persistentSession('full-holder'));
    let got = 0;
    back.on('message', () => void got++);
    await until('every acknowledged message arrived', () => got >= acked, 10_000);
    await back.endAsync();
    // Read, the stream lets go of them: the alarm clears at a check that sees no refusal since the last.
    await until(
      'the stream-full alarm cleared',
      () => n2.logLines().some((line) => line['alarm'] === 'mqtt-stream-full' && line['level'] === 30),
      15_000,
    );
    await publisher.endAsync();
  });
});
