import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import WebSocket from 'ws';
import { launchChromium } from './support/chromium.js';
import { type BrokerNode, TestCluster, until } from './support/cluster.js';
import { DESKTOP, screenshotPath, signedIn } from './support/dashboard-page.js';
import { opened } from './support/ws-helpers.js';

// The dashboard of one node of a real cluster, in a real Chromium: it lists every node's connections,
// and says which node holds each, and every node's load, NATS connection and store.

const ADMIN = 'cluster-dashboard-admin-0123456789';
const WAIT_MS = 10_000;

describe('cluster: the dashboard of one node', () => {
  let cluster: TestCluster;
  let browser: Browser;
  const clients: WebSocket[] = [];

  before(async () => {
    // Each node reaches NATS through a proxy of its own, which can cut it off.
    cluster = await TestCluster.start(3, {
      proxied: true,
      config: {
        admin: { tokens: [ADMIN] },
        endpoints: [{ path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' }],
      },
    });
    browser = await launchChromium();
  });
  after(async () => {
    for (const ws of clients) ws.terminate();
    await browser?.close();
    await cluster?.close();
  });

  it("lists a connection of another node with that node's id, and its own as this one", async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    for (const node of [n1, n2]) {
      const ws = new WebSocket(`${node.url}/chat`, 'chat.v1');
      ws.on('error', () => undefined);
      await opened(ws);
      clients.push(ws);
    }
    const { context, page } = await signedIn(browser, n1.http, ADMIN, DESKTOP);
    await page.getByRole('button', { name: 'Apply filters and refresh' }).click();
    const rows = page.locator('#connections tr[data-connection]');
    await page.locator(`#connections td[data-node="${n2.id}"]`).waitFor({ timeout: WAIT_MS });
    await page.locator(`#connections td[data-node="${n1.id}"]`).waitFor({ timeout: WAIT_MS });
    assert.equal(await rows.count(), 2);
    assert.equal((await page.locator(`td[data-node="${n1.id}"]`).innerText()).trim(), `${n1.id} (this one)`);
    assert.equal((await page.locator(`td[data-node="${n2.id}"]`).innerText()).trim(), n2.id);
    assert.equal(await page.locator('#connections').getByRole('columnheader', { name: 'Node' }).count(), 1);
    await context.close();
  });

  it("shows each node's CPU, memory and event-loop delay", async () => {
    const { context, page } = await signedIn(browser, (cluster.nodes[0] as BrokerNode).http, ADMIN, DESKTOP);
    for (const node of cluster.nodes) {
      const row = page.locator('#nodes tr', {
        has: page.locator(`th:text-is("${node.id}"), th:text-is("${node.id} (this one)")`),
      });
      // CPU is a share over two readings: there from the feed's second tick on.
      await row.locator('[data-load="cpu"]', { hasText: /^\d+ %$/ }).waitFor({ timeout: WAIT_MS });
      assert.match(await row.locator('[data-load="memory"]').innerText(), /^[1-9]\d* MiB$/);
      assert.match(await row.locator('[data-load="loop"]').innerText(), /^\d+\.\d ms$/);
    }
    await context.close();
  });

  it("shows each node's NATS connection and store, and a node cut from NATS as such until it heals", async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const { context: hereContext, page: here } = await signedIn(browser, n1.http, ADMIN, DESKTOP);
    const { context: cutContext, page: cut } = await signedIn(browser, n2.http, ADMIN, DESKTOP);
    const row = (page: typeof here, node: BrokerNode) =>
      page.locator(`#nodes tr[data-node-row="${node.id}"]`);
    const address = new URL(cluster.nats.url).host;
    for (const node of cluster.nodes) {
      const nats = row(here, node).locator('td[data-nats="connected"]');
      await nats.waitFor({ timeout: WAIT_MS });
      // The node's own NATS client's server: a proxy's port, not the server's. (A node on a busy box may
      // show its heartbeat unconfirmed for a moment after that.)
      assert.match(
        await nats.innerText(),
        /^connected v\d+\.\d+\.\d+\S* at 127\.0\.0\.1:\d+\s+connected .+ ago(\s+heartbeat unconfirmed)?$/,
      );
      assert.ok(!(await nats.innerText()).includes(address));
      // Each node's store check starts with its first reading.
      const store = row(here, node).locator('td[data-store="true"]');
      await store.waitFor({ timeout: WAIT_MS });
      assert.equal(await store.innerText(), 'working postgres');
    }
    // The picture in docs/operations.md: every row with its load too.
    for (const node of cluster.nodes) {
      await row(here, node)
        .locator('[data-load="cpu"]', { hasText: /^\d+ %$/ })
        .waitFor({ timeout: WAIT_MS });
    }
    await here.locator('#nodes').screenshot({ path: screenshotPath('dashboard-nodes.png') });
    const own = (state: string) => row(cut, n2).locator(`td[data-nats="${state}"]`);
    await own('connected').waitFor({ timeout: WAIT_MS });

    n2.cut();
    // Its client misses its pings, drops the connection and dials again, through the same cut path.
    await own('reconnecting').waitFor({ timeout: 3 * WAIT_MS });
    assert.match(await own('reconnecting').innerText(), /last connected .+ ago/);
    const unconfirmed = row(cut, n2).locator('[data-heartbeat="unconfirmed"]');
    await unconfirmed.waitFor({ timeout: WAIT_MS });
    // The others hear nothing from it: it is named as not answering, then gone from the live set.
    await until(
      `${n1.id}'s page no longer has ${n2.id}'s figures`,
      async () => (await row(here, n2).locator('td[data-nats]').count()) === 0,
      3 * WAIT_MS,
    );

    n2.heal();
    await own('connected').waitFor({ timeout: 3 * WAIT_MS });
    await unconfirmed.waitFor({ state: 'detached', timeout: 3 * WAIT_MS });
    await row(here, n2)
      .locator('td[data-nats="connected"]')
      .waitFor({ timeout: 3 * WAIT_MS });
    // Back in every node's live set, so that the alarms the cut raised clear (the test after waits for that).
    await cluster.untilPastNodeTimeout();
    await cluster.assertFullMembership();
    await hereContext.close();
    await cutContext.close();
  });

  // Last: it kills a node.
  it('raises node-gone when a node stops beating, naming it, and clears it when the node is back', async () => {
    const [n1, n2] = cluster.nodes as [BrokerNode, BrokerNode];
    const { context, page } = await signedIn(browser, n1.http, ADMIN, DESKTOP);
    const metrics = async () => (await fetch(`${n1.http}/metrics`)).text();
    // The cut in the test before may have raised it: it clears at the next check, the nodes all back.
    await until(
      'no node-gone alarm',
      async () => /broker_alarm_active\{alarm="node-gone"\} 0/.test(await metrics()),
      3 * WAIT_MS,
    );
    await page
      .locator('.alarm-banner [data-alarm="node-gone"]')
      .waitFor({ state: 'detached', timeout: WAIT_MS });

    // The alarm history may already hold a cleared node-gone row: the cut in the test before raised one.
    const clearedRows = page.locator('[data-alarm-row="node-gone"][data-state="cleared"]');
    const clearedBefore = await clearedRows.count();
    const logged = n1.logLines().length;
    await n2.kill();
    // Its heartbeats time out (TEST_NODE_TIMEOUT_MS), then the next check (every 5 s) raises it.
    const banner = page.locator('.alarm-banner [data-alarm="node-gone"]');
    await banner.waitFor({ timeout: 3 * WAIT_MS });
    assert.match(await banner.innerText(), new RegExp(`\\(${n2.id}\\)`));
    assert.match(await metrics(), /broker_alarm_active\{alarm="node-gone"\} 1/);
    // The log line reaches the test through a pipe: it may come after the page shows the alarm.
    // Lines from before the kill left out: the cut in the test before may have raised it too.
    const raisedLine = () =>
      n1
        .logLines()
        .slice(logged)
        .find((line) => line['alarm'] === 'node-gone');
    await until('the alarm logged', () => raisedLine() !== undefined, WAIT_MS);
    const raised = raisedLine();
    assert.equal(raised?.['detail'], n2.id);
    assert.equal(raised?.['level'], 40);

    await cluster.startNode({}, n2.id);
    await until(
      'a node-gone row cleared since the kill',
      async () => (await clearedRows.count()) > clearedBefore,
      3 * WAIT_MS,
    );
    // The banner and the alarm row are drawn apart: the banner may go a moment after the row says cleared.
    await banner.waitFor({ state: 'detached', timeout: WAIT_MS });
    assert.match(await metrics(), /broker_alarm_active\{alarm="node-gone"\} 0/);
    await context.close();
  });
});
