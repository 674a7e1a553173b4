import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type MqttClient } from 'mqtt';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { type BrokerNode, TestCluster } from './support/cluster.js';
import { PHONE, signedInOnPhone } from './support/dashboard-page.js';
import { connect, connectWithInbox, persistentSession, sessionPresent } from './support/mqtt-helpers.js';
import { waitFor } from './support/ws-helpers.js';

// The dashboard's Find section on one node of a real three-node cluster, in a real Chromium at a
// phone's width: it finds an MQTT.js client connected to another node by its client id, through the
// MQTT module's lookup, and closes its connection after the operator confirms; and finds the
// subscribers of a topic on every node through the admin API.

const ADMIN = 'cluster-find-admin-0123456789';
const WAIT_MS = 10_000;

/** The dashboard of `node` in a phone's browser, signed in, its Find section set to the MQTT session `clientId`. */
async function findSession(
  browser: Browser,
  node: BrokerNode,
  clientId: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const { context, page } = await signedInOnPhone(browser, node.http, ADMIN);
  await page.getByLabel('Look for').selectOption({ label: 'MQTT session' });
  await page.getByLabel('Client id', { exact: true }).fill(clientId);
  return { context, page };
}

describe('cluster: finding a client from the dashboard of another node', () => {
  let cluster: TestCluster;
  let browser: Browser;
  const clients: MqttClient[] = [];

  before(async () => {
    cluster = await TestCluster.start(3, { config: { admin: { tokens: [ADMIN] } } });
    browser = await launchChromium();
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await browser?.close();
    await cluster?.close();
  });

  it('finds a client of node 3 from node 1, with its node and subscription, and kicks it once confirmed', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const device = await connect(n3, persistentSession('console-device-3'));
    clients.push(device);
    await device.subscribeAsync('console/+/cmd', { qos: 1 });

    const { context, page } = await findSession(browser, n1, 'console-device-3');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    const result = page.locator('#find [data-lookup="mqtt-session"]');
    await result.waitFor({ timeout: WAIT_MS });
    assert.equal(await result.locator('[data-field="Node"]').getAttribute('data-node'), n3.id);
    assert.equal(await result.locator('[data-field="Connection"]').innerText(), 'WebSocket');
    assert.equal(await result.locator('[data-missing]').count(), 0);
    const subscription = result.locator('[data-lookup-table="subscriptions"] tr[data-row="console/+/cmd"]');
    assert.equal(await subscription.locator('[data-cell="qos"]').innerText(), '1');

    // A phone's width: the result, its table and its buttons fit with no sideways scroll.
    const scrollWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(scrollWidth <= PHONE.width, `the page is ${scrollWidth} px wide in a ${PHONE.width} px screen`);

    // Dismissed: nothing is asked of the broker (counted below, once the accepted one is through).
    const actions: string[] = [];
    page.on('request', (req) => {
      if (req.method() === 'POST' && req.url().includes('/actions/')) actions.push(req.url());
    });
    page.once('dialog', (dialog) => void dialog.dismiss());
    await result.locator('[data-action="kick"]').click();

    // Accepted: the connection on node 3 closes; the page finds the session again, now away.
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.accept();
      }),
    );
    const closed = new Promise<void>((resolve) => device.once('close', () => resolve()));
    await result.locator('[data-action="kick"]').click();
    assert.match(await asked, /console-device-3/);
    await closed;
    await result
      .locator('[data-field="Connection"]', { hasText: 'not connected' })
      .waitFor({ timeout: WAIT_MS });
    assert.equal(await result.locator('[data-action="kick"]').count(), 0);
    assert.equal(await result.locator('[data-action="discard"]').count(), 1);
    assert.equal(actions.length, 1, actions.join(', '));
    assert.match(actions[0] ?? '', /\/lookups\/mqtt-session\/console-device-3\/actions\/kick$/);
    await context.close();

    // The session stayed: the client comes back to it on another node.
    const back = await connect(n2, persistentSession('console-device-3'));
    clients.push(back);
    assert.equal(sessionPresent(back), true);
  });

  it("sees an away session's messages pile up in the cluster's stream, and go once its client is back", async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const device = await connect(n2, persistentSession('console-away'));
    await device.subscribeAsync('away/#', { qos: 1 });
    await device.endAsync();
    const publisher = await connect(n1, { clientId: 'console-away-publisher' });
    clients.push(publisher);
    const publish = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) await publisher.publishAsync('away/x', `m${i}`, { qos: 1 });
    };
    await publish(0, 3);

    const { context, page } = await findSession(browser, n3, 'console-away');
    const result = page.locator('#find [data-lookup="mqtt-session"]');
    const inStream = async (count: number) => {
      await page.getByRole('button', { name: 'Find', exact: true }).click();
      await result
        .locator('[data-field="In the stream"]', { hasText: String(count) })
        .waitFor({ timeout: WAIT_MS });
    };
    // Acknowledged to the publisher means stored: the count is exact at once.
    await inStream(3);
    assert.equal(await result.locator('[data-field="Connection"]').innerText(), 'not connected');
    assert.equal(await result.locator('[data-field="Node"]').getAttribute('data-node'), n2.id);
    await publish(3, 2);
    await inStream(5);
    await context.close();

    // Back on another node: it gets the five, and the stream lets them go as it acknowledges them.
    const { client: back, inbox } = await connectWithInbox(n1, persistentSession('console-away'));
    clients.push(back);
    await inbox.waitFor((m) => m.payload === 'm4');
    assert.deepEqual(
      inbox.received.map((m) => m.payload),
      ['m0', 'm1', 'm2', 'm3', 'm4'],
    );
    const streamCount = async (): Promise<string | null | undefined> => {
      const res = await fetch(`${n3.http}/admin/v1/lookups/mqtt-session/console-away`, {
        headers: { Authorization: `Bearer ${ADMIN}` },
      });
      const view = (await res.json()) as { fields: { label: string; value: string | null }[] };
      return view.fields.find((f) => f.label === 'In the stream')?.value;
    };
    await waitFor(async () => (await streamCount()) === '0');
  });

  it('finds from node 1 the subscribers of a topic on every node, each with its node', async () => {
    const [n1, n2, n3] = cluster.nodes as [BrokerNode, BrokerNode, BrokerNode];
    const there = await connect(n2, { clientId: 'fleet-n2' });
    const shared = await connect(n3, { clientId: 'fleet-n3' });
    const other = await connect(n1, { clientId: 'fleet-n1' });
    clients.push(there, shared, other);
    await there.subscribeAsync('fleet/+/cmd', { qos: 1 });
    await shared.subscribeAsync('$share/ops/fleet/#', { qos: 0 });
    await other.subscribeAsync('fleet/other', { qos: 1 });

    const res = await fetch(
      `${n1.http}/admin/v1/lookups/mqtt-subscribers/${encodeURIComponent('fleet/7/cmd')}`,
      {
        headers: { Authorization: `Bearer ${ADMIN}` },
      },
    );
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('broker-missing-nodes'), null);
    const view = (await res.json()) as {
      missing: string[];
      tables: { rows: { cells: Record<string, unknown> }[] }[];
    };
    assert.deepEqual(view.missing, []);
    assert.deepEqual(
      view.tables[0]?.rows.map((r) => r.cells),
      [
        {
          client: 'fleet-n2',
          node: n2.id,
          filter: 'fleet/+/cmd',
          qos: 1,
          group: null,
          connected: 'connected',
        },
        {
          client: 'fleet-n3',
          node: n3.id,
          filter: '$share/ops/fleet/#',
          qos: 0,
          group: 'ops',
          connected: 'connected',
        },
      ],
    );
  });
});
