import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from '@nats-io/transport-node';
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

  it('a node warns at boot, once, when its nats-server may lose acknowledged messages across restarts (before 2.10.16), and only then', async () => {
    const nc = await connect({ servers: cluster.nats.urls });
    const version = nc.info?.version ?? '';
    await nc.close();
    const [major = 0, minor = 0, patch = 0] = version.split('.').map((n) => Number.parseInt(n, 10));
    const old = major < 2 || (major === 2 && (minor < 10 || (minor === 10 && patch < 16)));
    const [n1] = cluster.nodes;
    assert.ok(n1 !== undefined);
    const warnings = n1
      .logLines()
      .filter((line) => /may lose or repeat acknowledged stream messages/.test(String(line['msg'])));
    assert.equal(warnings.length, old ? 1 : 0, `nats-server ${version}: ${JSON.stringify(warnings)}`);
    if (old) assert.equal(warnings[0]?.['natsServer'], version);
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
