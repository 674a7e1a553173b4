import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { openFeed, snapshotOf } from './support/dashboard-feed.js';
import { closed, opened, refusedStatus } from './support/ws-helpers.js';

interface Listed {
  id: string;
  node: string;
  endpoint: string;
}

async function listing(node: BrokerNode): Promise<{ rows: Listed[]; missing: string | null }> {
  const res = await fetch(`${node.http}/admin/v1/connections?endpoint=/chat`);
  assert.equal(res.status, 200);
  return { rows: (await res.json()) as Listed[], missing: res.headers.get('broker-missing-nodes') };
}

async function chat(node: BrokerNode): Promise<WebSocket> {
  const ws = new WebSocket(`${node.url}/chat`, 'chat.v1', { origin: 'https://static.example' });
  ws.on('error', () => undefined);
  await opened(ws);
  return ws;
}

describe('cluster: the admin API sees every node', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(3, {
      config: {
        endpoints: [
          {
            path: '/chat',
            subprotocols: ['chat.v1'],
            defaultModule: 'chat.v1',
            origins: ['https://static.example'],
            requireOrigin: true,
          },
        ],
        // The poll is far away (ten minutes): a change seen before that came with the notice on NATS.
        store: { refreshIntervalMs: 600_000 },
      },
    });
  });
  after(() => cluster?.close());

  it('lists the connections of every node, closes one held by another node, and audits it', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const sockets = [await chat(n1), await chat(n2), await chat(n3)];
    const { rows, missing } = await listing(n1);
    assert.equal(missing, null);
    assert.deepEqual(rows.map((r) => r.node).sort(), ['n1', 'n2', 'n3']);

    const onN3 = rows.find((r) => r.node === 'n3');
    assert.ok(onN3 !== undefined);
    const got = await fetch(`${n2.http}/admin/v1/connections/${onN3.id}`);
    assert.equal(((await got.json()) as Listed).node, 'n3');
    const closing = closed(sockets[2] as WebSocket);
    const res = await fetch(`${n1.http}/admin/v1/connections/${onN3.id}?code=4001&reason=maintenance`, {
      method: 'DELETE',
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await closing, { code: 4001, reason: 'maintenance' });
    await until('gone from the listing', async () => (await listing(n2)).rows.length === 2, 3000);
    assert.equal((await fetch(`${n1.http}/admin/v1/connections/${onN3.id}`)).status, 404);
    const audit = (await (await fetch(`${n3.http}/admin/v1/audit`)).json()) as {
      action: string;
      target: string;
    }[];
    assert.ok(audit.some((row) => row.action === 'connection.close' && row.target === onN3.id));
    for (const ws of sockets) ws.close();
  });

  it("the dashboard's feed on one node shows every node with its own connections", async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const sockets = [await chat(n2), await chat(n3), await chat(n3)];
    // The other tests' connections are gone first.
    await until('only these three open', async () => (await listing(n1)).rows.length === 3, 3000);
    // Loopback without an admin token: the feed needs no credential here.
    const feed = await openFeed(n1.http);
    try {
      assert.equal(feed.status, 200);
      const snapshot = snapshotOf<{
        node: string;
        nodes: { answered: { node: string; connections: number }[]; missing: string[] };
      }>(await feed.first);
      assert.equal(snapshot.node, 'n1');
      assert.deepEqual(
        snapshot.nodes.answered.map(({ node, connections }) => ({ node, connections })),
        [
          { node: 'n1', connections: 0 },
          { node: 'n2', connections: 1 },
          { node: 'n3', connections: 2 },
        ],
      );
      assert.deepEqual(snapshot.nodes.missing, []);
    } finally {
      feed.close();
      for (const ws of sockets) ws.close();
    }
  });

  it("GET /admin/v1/nodes on one node: every node's NATS connection and store, as a script reads them", async () => {
    const [n1] = cluster.nodes as [BrokerNode];
    interface Row {
      node: string;
      nats: {
        state: string;
        server: { version: string | null; address: string | null };
        connectedAgoMs: number;
        heartbeatConfirmed: boolean;
      };
      store: { kind: string; working: boolean | null; lastError: unknown };
    }
    const read = async (): Promise<{ answered: Row[]; missing: string[] }> => {
      const res = await fetch(`${n1.http}/admin/v1/nodes`);
      assert.equal(res.status, 200);
      return (await res.json()) as { answered: Row[]; missing: string[] };
    };
    // Each node's store check starts with its first reading.
    await until(
      "every node's store checked and beat confirmed",
      async () =>
        (await read()).answered.filter((row) => row.store.working === true && row.nats.heartbeatConfirmed)
          .length === 3,
      10_000,
    );
    const { answered, missing } = await read();
    assert.deepEqual(missing, []);
    assert.deepEqual(
      answered.map((row) => row.node),
      ['n1', 'n2', 'n3'],
    );
    const address = new URL(cluster.nats.urls[0] as string).host;
    for (const { node, nats, store } of answered) {
      assert.equal(nats.state, 'connected', node);
      assert.equal(nats.server.address, address, node);
      assert.match(nats.server.version ?? '', /^\d+\.\d+\.\d+/, node);
      assert.ok(nats.connectedAgoMs >= 0, node);
      assert.equal(typeof nats.heartbeatConfirmed, 'boolean', node);
      assert.deepEqual([store.kind, store.lastError], ['postgres', null], node);
    }
  });

  it('an origin added through one node is allowed on the others by the notice on NATS, not the store poll', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const origin = 'https://new.example';
    assert.equal(await refusedStatus(new WebSocket(`${n2.url}/chat`, 'chat.v1', { origin })), 403);
    const res = await fetch(`${n1.http}/admin/v1/origins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ origin, endpoint: '/chat' }),
    });
    assert.equal(res.status, 201);
    for (const node of [n2, n3]) {
      await until(
        `${node.id} allows the new origin`,
        async () => {
          const ws = new WebSocket(`${node.url}/chat`, 'chat.v1', { origin });
          ws.on('error', () => undefined);
          const ok = await opened(ws).then(
            () => true,
            () => false,
          );
          ws.terminate();
          return ok;
        },
        // Far within the store poll's ten minutes: only the notice can have brought the change.
        10_000,
      );
    }
  });

  it('a node killed with SIGKILL: named as not answering, then its connections leave the listings', async () => {
    const extra = await cluster.startNode();
    const [n1] = cluster.nodes as [BrokerNode];
    await chat(n1);
    await chat(extra);
    await until('both listed', async () => (await listing(n1)).rows.some((r) => r.node === extra.id), 3000);
    await extra.kill();
    const during = await listing(n1);
    // Until the heartbeat times out the node is still live: the listing names it as not answering (or,
    // once it is known dead, does not ask it); its rows never appear, and no live node is named.
    assert.ok(during.missing === null || during.missing === extra.id, `missing: ${during.missing}`);
    assert.ok(!during.rows.some((r) => r.node === extra.id));
    await until(
      'the dead node is out of the listing, with nobody missing',
      async () => {
        const after = await listing(n1);
        return after.missing === null && after.rows.every((r) => r.node !== extra.id);
      },
      8000,
    );
  });
});
