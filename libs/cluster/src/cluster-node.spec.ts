import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KvOptions } from '@nats-io/kv';
import { NodeTimeoutError, NoHolderError, RemoteError } from './cluster-errors.js';
import { ClusterNode } from './cluster-node.js';
import {
  capturedLogger,
  eventually,
  NATS_URL,
  removeClusterState,
  testClusterConfig,
} from './cluster.spec-support.js';

describe('ClusterNode', () => {
  const config = testClusterConfig();
  const nodes: ClusterNode[] = [];
  const join = async (id: string) => {
    const node = await ClusterNode.join(config, id, capturedLogger().logger);
    nodes.push(node);
    return node;
  };

  after(async () => {
    for (const node of nodes) await node.leave();
    await removeClusterState(config.name);
  });

  it('refuses to start when NATS does not answer, naming the server', async () => {
    await assert.rejects(
      ClusterNode.join({ ...config, natsUrl: ['nats://127.0.0.1:1'] }, 'x', capturedLogger().logger),
      /cannot reach NATS at nats:\/\/127\.0\.0\.1:1/,
    );
  });

  it("natsStatus: connected, the server's version and host:port without the URL's credentials, its beat confirmed", async () => {
    const url = new URL(NATS_URL);
    url.username = 'someone';
    url.password = 'secret-word';
    const node = await ClusterNode.join(
      { ...config, natsUrl: [url.toString()] },
      's-a',
      capturedLogger().logger,
    );
    try {
      const status = node.natsStatus();
      assert.equal(status.state, 'connected');
      assert.equal(status.server.address, url.host);
      assert.match(status.server.version ?? '', /^\d+\.\d+\.\d+/);
      assert.ok(status.connectedAgoMs >= 0);
      assert.ok(!JSON.stringify(status).includes('secret-word'));
      await eventually('its beat confirmed', () => node.natsStatus().heartbeatConfirmed);
    } finally {
      await node.leave();
    }
    assert.equal(node.natsStatus().state, 'disconnected');
  });

  it('membership: nodes see each other join, leave cleanly at once, and die by heartbeat timeout', async () => {
    const a = await join('m-a');
    const b = await join('m-b');
    await eventually('a sees b', () => a.membership.isLive('m-b'));
    await eventually('b sees a', () => b.membership.isLive('m-a'));
    assert.deepEqual(a.membership.live(), ['m-a', 'm-b']);

    const c = await join('m-c');
    await eventually('a sees c', () => a.membership.isLive('m-c'));
    const leftAt = Date.now();
    await c.leave();
    await eventually('a sees c leave', () => !a.membership.isLive('m-c'));
    assert.ok(Date.now() - leftAt < config.nodeTimeoutMs, 'a clean leave is seen before the timeout');

    // A node that dies without leaving: its connection closes, its heartbeats stop.
    const d = await join('m-d');
    await eventually('a sees d', () => a.membership.isLive('m-d'));
    const changes: string[] = [];
    const off = a.membership.onChange((change) =>
      changes.push(`${change.node}:${change.up ? 'up' : 'down'}`),
    );
    await d.nc.close();
    await eventually('a sees d die', () => !a.membership.isLive('m-d'), config.nodeTimeoutMs * 4);
    assert.deepEqual(changes, ['m-d:down']);
    off();
  });

  it('node-addressed requests: answers, remote errors, this node itself, a node nobody serves', async () => {
    const a = await join('r-a');
    const b = await join('r-b');
    b.serve('echo', (body) => ({ echoed: body, by: 'r-b' }));
    b.serve('fail', () => {
      throw new RangeError('no such thing');
    });
    a.serve('echo', (body) => ({ echoed: body, by: 'r-a' }));
    await b.nc.flush();
    assert.deepEqual(await a.request('r-b', 'echo', { x: 1 }), { echoed: { x: 1 }, by: 'r-b' });
    assert.deepEqual(await a.request('r-a', 'echo', 2), { echoed: 2, by: 'r-a' });
    await assert.rejects(a.request('r-b', 'fail', {}), (err: unknown) => {
      assert.ok(err instanceof RemoteError);
      assert.equal(err.code, 'RangeError');
      assert.equal(err.message, 'no such thing');
      return true;
    });
    await assert.rejects(a.request('nobody', 'echo', {}), NoHolderError);
  });

  it('a request whose answer does not come in time fails with NodeTimeoutError', async () => {
    const a = await join('t-a');
    const b = await join('t-b');
    b.serve('slow', () => new Promise((resolve) => setTimeout(resolve, 1000)));
    await b.nc.flush();
    await assert.rejects(a.request('t-b', 'slow', {}, 200), NodeTimeoutError);
  });

  it('keyed requests reach the holder; without one, NoHolderError', async () => {
    const a = await join('k-a');
    const b = await join('k-b');
    const sub = b.serveKey('cp', 'CP/1.x', (body) => ({ held: 'k-b', body }));
    await b.nc.flush();
    assert.deepEqual(await a.requestKey('cp', 'CP/1.x', 'hi'), { held: 'k-b', body: 'hi' });
    sub.unsubscribe();
    await b.nc.flush();
    await assert.rejects(a.requestKey('cp', 'CP/1.x', 'hi'), NoHolderError);
  });

  it('scatter asks every live node and names those that did not answer', async () => {
    const config2 = testClusterConfig();
    const x = await ClusterNode.join(config2, 'x', capturedLogger().logger);
    const y = await ClusterNode.join(config2, 'y', capturedLogger().logger);
    const z = await ClusterNode.join(config2, 'z', capturedLogger().logger);
    try {
      x.serve('count', () => 1);
      y.serve('count', () => 2);
      // The subscriptions reach the server before the scatter (the heartbeats that make y live may not wait for them).
      await Promise.all([x.nc.flush(), y.nc.flush()]);
      // z serves nothing: it is live but does not answer.
      await eventually('x sees all', () => x.membership.live().length === 3);
      const result = await x.scatter<number>('count', {}, 300);
      assert.deepEqual([...result.answers].sort(), [
        ['x', 1],
        ['y', 2],
      ]);
      assert.deepEqual(result.missing, ['z']);
    } finally {
      await x.leave();
      await y.leave();
      await z.leave();
      await removeClusterState(config2.name);
    }
  });

  it('a node missing from a heartbeat bucket just made again (a nats-server restart) is not confirmed dead', async () => {
    const config2 = testClusterConfig({ nodeTimeoutMs: 3000 });
    const a = await ClusterNode.join(config2, 'h-a', capturedLogger().logger);
    try {
      // The bucket is older than nodeTimeoutMs: a node never seen there, and not in it, is dead.
      await new Promise((resolve) => setTimeout(resolve, config2.nodeTimeoutMs + 100));
      assert.equal(await a.membership.confirmDead('h-ghost'), true);

      // A restarted nats-server keeps no in-memory stream: the first node back makes the bucket again,
      // empty. A live node that has not beaten since is missing from it as much as a dead one.
      const jsm = await jetstreamManager(a.nc);
      const name = `${config2.name}-nodes`;
      const { config: stream } = await jsm.streams.info(`KV_${name}`);
      await jsm.streams.delete(`KV_${name}`);
      const options: Partial<KvOptions> = { history: 1, storage: stream.storage, ttl: stream.max_age / 1e6 };
      await new Kvm(a.nc).create(name, options);
      assert.equal(await a.membership.confirmDead('h-ghost'), false);
      // Once the new bucket is nodeTimeoutMs old, the node missing from it is: a death awaited is confirmed.
      assert.equal(await a.membership.awaitDeath('h-ghost'), true);
    } finally {
      await a.leave();
      await removeClusterState(config2.name);
    }
  });

  it('change notices reach the other nodes, and a notice that is not JSON is dropped', async () => {
    const a = await join('n-a');
    const b = await join('n-b');
    const got: unknown[] = [];
    b.onNotice('origins', (body) => got.push(body));
    await b.nc.flush();
    a.nc.publish(a.subject('notice', 'origins'), 'not json');
    a.notify('origins', { changed: 1 });
    await eventually('notice', () => got.length === 1);
    assert.deepEqual(got, [{ changed: 1 }]);
  });
});
