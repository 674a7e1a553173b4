import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TestCluster, until } from './support/cluster.js';
import { freePort } from './support/free-port.js';

describe('cluster: boot', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(1);
  });
  after(() => cluster?.close());

  it('NATS unreachable at boot: a clear error, a non-zero exit, never a half-started node', async () => {
    const port = await freePort();
    const node = cluster.spawn('unreachable', { NATS_URL: `nats://127.0.0.1:${port}` });
    const code = await node.exit();
    assert.notEqual(code, 0);
    assert.match(node.log(), new RegExp(`cannot reach NATS at nats://127\\.0\\.0\\.1:${port}`));
    assert.doesNotMatch(node.log(), /broker listening/);
  });

  it('NATS with SQLite stops the boot and says why', async () => {
    const node = cluster.spawn('sqlite', { DATABASE_URL: undefined });
    const code = await node.exit();
    assert.notEqual(code, 0);
    assert.match(node.log(), /cluster\.natsUrl: cluster mode \(NATS_URL\) needs PostgreSQL \(DATABASE_URL\)/);
    assert.doesNotMatch(node.log(), /broker listening/);
  });

  it('/health/ready names NATS and the store; the node leaves the cluster cleanly on SIGTERM', async () => {
    const [n1] = cluster.nodes;
    assert.ok(n1 !== undefined);
    const ready = await fetch(`${n1.http}/health/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', services: { store: 'up', nats: 'up' } });
    const second = await cluster.startNode();
    assert.equal(await second.stop(), 0);
    await until(
      'n1 saw n2 leave',
      () => n1.logLines().some((line) => line['peer'] === 'n2' && line['why'] === 'left the cluster'),
      2000,
    );
  });

  it('a second process with a node id that a live node beats under is refused, and says why', async () => {
    const twin = cluster.spawn('n1');
    const code = await twin.exit();
    assert.notEqual(code, 0);
    assert.match(twin.log(), /another process is running as node n1/);
    assert.doesNotMatch(twin.log(), /broker listening/);
  });
});
