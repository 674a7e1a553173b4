import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type BusMessage } from '#broker/bus';
import { type ClusterConfig } from '#broker/config';
import { ClusterNode } from './cluster-node.js';
import { capturedLogger, eventually, removeClusterState, testClusterConfig } from './cluster.spec-support.js';
import { NatsTopicBus } from './nats-topic-bus.js';

const text = (message: BusMessage) => Buffer.from(message.payload).toString('utf8');
const payload = (value: string) => new TextEncoder().encode(value);

/** Resolves once a probe published on `a` shows that `b` has its NATS subscriptions in place. */
async function settled(a: ClusterNode, b: ClusterNode): Promise<void> {
  await b.nc.flush();
  await a.nc.flush();
}

describe('NatsTopicBus: the bus across two nodes', () => {
  let config: ClusterConfig;
  let nodeA: ClusterNode;
  let nodeB: ClusterNode;
  let busA: NatsTopicBus;
  let busB: NatsTopicBus;
  const logB = capturedLogger();

  before(async () => {
    config = testClusterConfig();
    nodeA = await ClusterNode.join(config, 'a', capturedLogger().logger);
    nodeB = await ClusterNode.join(config, 'b', logB.logger);
    busA = new NatsTopicBus(nodeA, { logger: capturedLogger().logger });
    busB = new NatsTopicBus(nodeB, { logger: logB.logger });
  });

  after(async () => {
    busA.close();
    busB.close();
    await nodeA.leave();
    await nodeB.leave();
    await removeClusterState(config.name);
  });

  it('delivers locally at once and to the other node once, never back to the publisher', async () => {
    const onA: string[] = [];
    const onB: string[] = [];
    const subA = busA.subscribe('chat/+', (m) => onA.push(`${m.topic}=${text(m)} node=${m.node ?? 'local'}`));
    const subB = busB.subscribe('chat/+', (m) => onB.push(`${m.topic}=${text(m)} node=${m.node ?? 'local'}`));
    await settled(nodeA, nodeB);
    const reached = busA.publish({
      topic: 'chat/room1',
      payload: payload('hi'),
      origin: 'test',
      principal: 'alice',
    });
    assert.equal(reached, 1);
    assert.deepEqual(onA, ['chat/room1=hi node=local']);
    await eventually('B got it', () => onB.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(onB, ['chat/room1=hi node=a']);
    assert.deepEqual(onA, ['chat/room1=hi node=local'], 'no echo from NATS');
    subA.unsubscribe();
    subB.unsubscribe();
  });

  it('carries origin, principal and content type', async () => {
    const got: BusMessage[] = [];
    const sub = busB.subscribe('meta/x', (m) => got.push(m));
    await settled(nodeA, nodeB);
    busA.publish({
      topic: 'meta/x',
      payload: payload('{}'),
      origin: 'mqtt',
      principal: 'bob',
      contentType: 'application/json',
    });
    busA.publish({ topic: 'meta/x', payload: payload('-'), origin: 'wamp.2.json', principal: null });
    await eventually('both arrived', () => got.length === 2);
    assert.deepEqual(
      got.map((m) => [m.origin, m.principal, m.contentType, m.node]),
      [
        ['mqtt', 'bob', 'application/json', 'a'],
        ['wamp.2.json', null, undefined, 'a'],
      ],
    );
    sub.unsubscribe();
  });

  it('a message matching two filters of a node reaches each subscription once; # includes the parent', async () => {
    const got: string[] = [];
    const s1 = busB.subscribe('home/#', (m) => got.push(`#:${m.topic}`));
    const s2 = busB.subscribe('home/+/temp', (m) => got.push(`+:${m.topic}`));
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'home/kitchen/temp', payload: payload('21'), origin: 'test' });
    busA.publish({ topic: 'home', payload: payload('root'), origin: 'test' });
    await eventually('three deliveries', () => got.length === 3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(got.sort(), ['#:home', '#:home/kitchen/temp', '+:home/kitchen/temp']);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('keeps $-topics out of leading wildcards, as MQTT does', async () => {
    const got: string[] = [];
    const s1 = busB.subscribe('#', (m) => got.push(`#:${m.topic}`));
    const s2 = busB.subscribe('$SYS/#', (m) => got.push(`sys:${m.topic}`));
    await settled(nodeA, nodeB);
    busA.publish({ topic: '$SYS/load', payload: payload('1'), origin: 'test' });
    busA.publish({ topic: 'after', payload: payload('2'), origin: 'test' });
    await eventually('two deliveries', () => got.length >= 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(got.sort(), ['#:after', 'sys:$SYS/load']);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('escapes topics a subject cannot hold and carries topics too long for a subject', async () => {
    const long = `long/${'x'.repeat(5000)}`;
    const odd = 'a.b/ /*/>';
    const got: string[] = [];
    const s1 = busB.subscribe('long/+', (m) => got.push(`long:${m.topic.length}`));
    const s2 = busB.subscribe(odd, (m) => got.push(`odd:${m.topic}`));
    const s3 = busB.subscribe('a.b/+/+/+', (m) => got.push(`wild:${m.topic}`));
    await settled(nodeA, nodeB);
    busA.publish({ topic: long, payload: payload('l'), origin: 'test' });
    busA.publish({ topic: odd, payload: payload('o'), origin: 'test' });
    await eventually('three deliveries', () => got.length === 3);
    assert.deepEqual(got.sort(), [`long:${long.length}`, `odd:${odd}`, `wild:${odd}`]);
    s1.unsubscribe();
    s2.unsubscribe();
    s3.unsubscribe();
  });

  it('a filter too long for a subject costs no NATS subscription (NATS would drop the connection) and still gets its topics', async () => {
    const long = `deep/${'y'.repeat(5000)}`;
    const got: string[] = [];
    const s1 = busB.subscribe(`${long}/#`, (m) => got.push(m.topic.slice(0, 10)));
    const s2 = busB.subscribe('alive/x', (m) => got.push(m.topic));
    await settled(nodeA, nodeB);
    busA.publish({ topic: `${long}/z`, payload: payload('l'), origin: 'test' });
    busA.publish({ topic: 'alive/x', payload: payload('a'), origin: 'test' });
    await eventually('both delivered', () => got.length === 2);
    assert.deepEqual(got.sort(), ['alive/x', 'deep/yyyyy']);
    assert.ok(nodeB.isConnected);
    s1.unsubscribe();
    s2.unsubscribe();
  });

  it('share: each message reaches one member of a queue across the nodes, the publishing node included', async () => {
    const got: string[] = [];
    const a = busA.share('workers', 'jobs/#', (m) => void got.push(`a:${m.topic}`));
    const b = busB.share('workers', 'jobs/#', (m) => void got.push(`b:${m.topic}`));
    const other = busB.share('auditors', 'jobs/#', (m) => void got.push(`audit:${m.topic}`));
    const long = `jobs/${'z'.repeat(5000)}`;
    await nodeA.queues.flush();
    await nodeB.queues.flush();
    const total = 200;
    for (let n = 0; n < total; n++)
      busA.publish({ topic: `jobs/${n}`, payload: payload('j'), origin: 'test' });
    busA.publish({ topic: long, payload: payload('l'), origin: 'test' });
    busA.publish({ topic: 'other/1', payload: payload('o'), origin: 'test' });
    await eventually('every job taken by a worker and audited', () => got.length === 2 * (total + 1));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const workers = got.filter((g) => !g.startsWith('audit:'));
    assert.equal(workers.length, total + 1, 'each message once per queue');
    assert.equal(new Set(workers.map((w) => w.slice(2))).size, total + 1);
    // NATS picks at random: with 200 messages, both nodes take some.
    assert.ok(workers.some((w) => w.startsWith('a:')) && workers.some((w) => w.startsWith('b:')));
    assert.ok(
      workers.some((w) => w.length > 5000),
      'a topic too long for a subject reaches the queue too',
    );
    a.unsubscribe();
    b.unsubscribe();
    other.unsubscribe();
    got.length = 0;
    busA.publish({ topic: 'jobs/after', payload: payload('j'), origin: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(got, []);
  });

  it('listens on NATS once per distinct filter, and stops with its last local subscription', async () => {
    const before = busB.remoteFilterCount;
    const got: string[] = [];
    const s1 = busB.subscribe('rc/x', (m) => got.push(`1:${text(m)}`));
    const s2 = busB.subscribe('rc/x', (m) => got.push(`2:${text(m)}`));
    assert.equal(busB.remoteFilterCount, before + 1);
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'rc/x', payload: payload('one'), origin: 'test' });
    await eventually('both subscriptions', () => got.length === 2);
    s1.unsubscribe();
    s1.unsubscribe();
    busA.publish({ topic: 'rc/x', payload: payload('two'), origin: 'test' });
    await eventually('the remaining one', () => got.length === 3);
    assert.deepEqual(got.sort(), ['1:one', '2:one', '2:two']);
    s2.unsubscribe();
    assert.equal(busB.remoteFilterCount, before);
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'rc/x', payload: payload('three'), origin: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(got.length, 3);
  });

  it("'node'-reach subscriptions hear their own node, and from the others only what is attracted, once", async () => {
    const got: string[] = [];
    const bridge = busB.subscribe('#', (m) => got.push(`${m.node ?? 'local'}:${m.topic}`), { reach: 'node' });
    const receivedBefore = busB.stats.received;
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'unwanted/x', payload: payload('-'), origin: 'test' });
    busB.publish({ topic: 'own/x', payload: payload('-'), origin: 'test' });
    const a1 = busB.attract('dev/+/t');
    const a2 = busB.attract('dev/#');
    const a3 = busB.attract('dev/#');
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'dev/1/t', payload: payload('-'), origin: 'test' });
    await eventually('the attracted message', () => got.includes('a:dev/1/t'));
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.deepEqual(got, ['local:own/x', 'a:dev/1/t'], 'own messages, and attracted ones once');
    // Only attracted topics crossed: the unwanted one never reached B.
    assert.equal(
      busB.stats.received - receivedBefore,
      2,
      'one copy per attracted filter matched, deduplicated',
    );
    a1.unsubscribe();
    a2.unsubscribe();
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'dev/2/t', payload: payload('-'), origin: 'test' });
    await eventually('still attracted by the third reference', () => got.includes('a:dev/2/t'));
    a3.unsubscribe();
    a3.unsubscribe();
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'dev/3/t', payload: payload('-'), origin: 'test' });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.ok(!got.includes('a:dev/3/t'));
    bridge.unsubscribe();
  });

  it('drops and logs a message on a bus subject that is not ours, and keeps serving', async () => {
    const got: string[] = [];
    const sub = busB.subscribe('bad/+', (m) => got.push(text(m)));
    await settled(nodeA, nodeB);
    // Raw NATS publishes a broker never makes: no headers, then a subject that decodes to no topic.
    nodeA.nc.publish(nodeA.subject('bus', 'bad', 'raw'), 'no headers');
    nodeA.nc.publish(nodeA.subject('bus', 'bad', '/zz'), 'bad escape');
    busA.publish({ topic: 'bad/fine', payload: payload('fine'), origin: 'test' });
    await eventually('the good one', () => got.length === 1);
    assert.deepEqual(got, ['fine']);
    assert.ok(logB.lines().some((line) => line['msg'] === 'bus message from NATS dropped'));
    sub.unsubscribe();
  });

  it('a handler that throws does not stop the others', async () => {
    const errors: unknown[] = [];
    const bus = new NatsTopicBus(nodeB, { logger: logB.logger, onHandlerError: (e) => errors.push(e) });
    const got: string[] = [];
    const s1 = bus.subscribe('boom', () => {
      throw new Error('handler failed');
    });
    const s2 = bus.subscribe('boom', (m) => got.push(text(m)));
    await settled(nodeA, nodeB);
    busA.publish({ topic: 'boom', payload: payload('ok'), origin: 'test' });
    await eventually('delivered', () => got.length === 1);
    assert.equal(errors.length, 1);
    s1.unsubscribe();
    s2.unsubscribe();
    bus.close();
  });
});
