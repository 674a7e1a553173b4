import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRPCError } from 'ocpp-rpc';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { BOOT, chargePoint } from './support/ocpp.js';

async function call(
  node: BrokerNode,
  identity: string,
  action: string,
  payload: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${node.http}/admin/v1/charge-points/${identity}/calls/${action}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('cluster: OCPP central-system commands reach the node holding the charge point', () => {
  let cluster: TestCluster;

  before(async () => {
    cluster = await TestCluster.start(3, { config: { ocpp: { callTimeoutMs: 3000 } } });
  });
  after(() => cluster?.close());

  it('a command through any node reaches the charge point on another; its answers and refusals come back as they would on one node', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const cp = chargePoint(n2.url, 'CP-1');
    const resets: unknown[] = [];
    cp.handle('Reset', async ({ params }) => {
      resets.push(params);
      return { status: 'Accepted' };
    });
    cp.handle('UpdateFirmware', async () => {
      throw createRPCError('NotSupported', 'no firmware updates here');
    });
    await cp.connect();
    await cp.call('BootNotification', BOOT);

    for (const node of [n1, n3, n2]) {
      const reply = await call(node, 'CP-1', 'Reset', { type: 'Soft' });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.deepEqual(reply.body, { status: 'Accepted' });
    }
    assert.equal(resets.length, 3);
    const refused = await call(n1, 'CP-1', 'UpdateFirmware', {
      location: 'https://fw.example/1.bin',
      retrieveDate: new Date().toISOString(),
    });
    assert.equal(refused.status, 502);
    assert.deepEqual(refused.body['ocppError'], {
      code: 'NotSupported',
      description: 'no firmware updates here',
      details: {},
    });
    const state = await (await fetch(`${n3.http}/admin/v1/charge-points/CP-1/state`)).json();
    assert.equal((state as { connected: boolean; node: string }).connected, true);
    assert.equal((state as { node: string }).node, 'n2');

    const nowhere = await call(n1, 'CP-nowhere', 'Reset', { type: 'Soft' });
    assert.equal(nowhere.status, 404);
    assert.match(String(nowhere.body['detail']), /not connected/);
    await cp.close();
    await until(
      'no node holds CP-1',
      async () => (await call(n1, 'CP-1', 'Reset', { type: 'Soft' })).status === 404,
      3000,
    );
  });

  it('a charge point connecting to another node replaces its lingering socket there', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const old = chargePoint(n1.url, 'CP-2');
    const closedOld = new Promise<{ code: number; reason: string }>((resolve) =>
      old.once('close', (event: { code: number; reason: string }) => resolve(event)),
    );
    await old.connect();
    await old.call('BootNotification', BOOT);
    const fresh = chargePoint(n2.url, 'CP-2');
    fresh.handle('Reset', async () => ({ status: 'Accepted' }));
    await fresh.connect();
    const closed = await closedOld;
    assert.equal(closed.code, 4000);
    assert.match(String(closed.reason), /replaced by a newer connection/);
    const reply = await call(n1, 'CP-2', 'Reset', { type: 'Hard' });
    assert.equal(reply.status, 200);
    await fresh.close();
  });

  it('the holding node killed mid-call: 502 or 504, never a false success', async () => {
    const victim = await cluster.startNode();
    const [n1] = cluster.nodes as [BrokerNode];
    const cp = chargePoint(victim.url, 'CP-3');
    cp.on('error', () => undefined);
    let asked = 0;
    // Answers only after the node is dead.
    cp.handle('Reset', () => {
      asked++;
      return new Promise((resolve) => setTimeout(() => resolve({ status: 'Accepted' }), 10_000));
    });
    await cp.connect();
    await cp.call('BootNotification', BOOT);
    const pending = call(n1, 'CP-3', 'Reset', { type: 'Soft' });
    await until('the charge point got the call', () => asked === 1, 3000);
    await victim.kill();
    const reply = await pending;
    assert.ok(
      reply.status === 502 || reply.status === 504,
      `status ${reply.status}: ${JSON.stringify(reply.body)}`,
    );
    await cp.close().catch(() => undefined);
  });
});
