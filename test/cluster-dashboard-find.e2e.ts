import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type IClientOptions } from 'mqtt';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { type BrokerNode } from './support/cluster.js';
import { consoleCluster, PHONE, signedInOnPhone } from './support/dashboard-page.js';
import { connect, connectWithInbox, persistentSession, sessionPresent } from './support/mqtt-helpers.js';
import { waitFor } from './support/ws-helpers.js';

// The dashboard's Find section on one node of a real three-node cluster, in a real Chromium at a
// phone's width: it finds an MQTT.js client connected to another node by its client id, through the
// MQTT module's lookup, and closes its connection after the operator confirms; finds the
// subscribers of a topic on every node through the admin API; and browses the retained messages the
// nodes share in their bucket, and clears one for every node.

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

/** The retained messages of `filter` as `node`'s lookup answers: each topic's preview and stored time (none on 404). */
async function retainedView(
  node: BrokerNode,
  filter: string,
): Promise<Map<string, { preview: string; stored: string | null }>> {
  const res = await fetch(`${node.http}/admin/v1/lookups/mqtt-retained/${encodeURIComponent(filter)}`, {
    headers: { Authorization: `Bearer ${ADMIN}` },
  });
  if (res.status === 404) return new Map();
  assert.equal(res.status, 200, await res.clone().text());
  const view = (await res.json()) as {
    tables: { rows: { key: string; cells: { preview: string; stored: string | null } }[] }[];
  };
  return new Map(
    view.tables[0]?.rows.map((r) => [r.key, { preview: r.cells.preview, stored: r.cells.stored }]),
  );
}

/** What a fresh subscriber to `filter` on `node` is given as retained, topic to payload in hex, by topic. */
async function retainedTo(node: BrokerNode, filter: string): Promise<[string, string][]> {
  const options: IClientOptions = { clientId: `retained-probe-${Math.random().toString(36).slice(2)}` };
  const probe = await connect(node, options);
  const got: [string, string][] = [];
  probe.on('message', (topic, payload, packet) => {
    if (packet.retain) got.push([topic, payload.toString('hex')]);
  });
  await probe.subscribeAsync(filter, { qos: 1 });
  // The retained messages go out right after the SUBACK, before the node reads the next packet: the
  // SUBACK of a second SUBSCRIBE comes after them.
  await probe.subscribeAsync(`fence/${Math.random().toString(36).slice(2)}`, { qos: 0 });
  await probe.endAsync();
  return got.sort(([a], [b]) => a.localeCompare(b));
}

describe('cluster: finding a client from the dashboard of another node', () => {
  const suite = consoleCluster(ADMIN);

  it('finds a client of node 3 from node 1, with its node and subscription, and kicks it once confirmed', async () => {
    const [n1, n2, n3] = suite.nodes;
    const device = await connect(n3, persistentSession('console-device-3'));
    suite.clients.push(device);
    await device.subscribeAsync('console/+/cmd', { qos: 1 });

    const { context, page } = await findSession(suite.browser, n1, 'console-device-3');
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
    suite.clients.push(back);
    assert.equal(sessionPresent(back), true);
  });

  it("sees an away session's messages pile up in the cluster's stream, and go once its client is back", async () => {
    const [n1, n2, n3] = suite.nodes;
    const device = await connect(n2, persistentSession('console-away'));
    await device.subscribeAsync('away/#', { qos: 1 });
    await device.endAsync();
    const publisher = await connect(n1, { clientId: 'console-away-publisher' });
    suite.clients.push(publisher);
    const publish = async (from: number, count: number) => {
      for (let i = from; i < from + count; i++) await publisher.publishAsync('away/x', `m${i}`, { qos: 1 });
    };
    await publish(0, 3);

    const { context, page } = await findSession(suite.browser, n3, 'console-away');
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
    suite.clients.push(back);
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
    const [n1, n2, n3] = suite.nodes;
    const there = await connect(n2, { clientId: 'fleet-n2' });
    const shared = await connect(n3, { clientId: 'fleet-n3' });
    const other = await connect(n1, { clientId: 'fleet-n1' });
    suite.clients.push(there, shared, other);
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

  it('browses from node 1 the retained messages set through nodes 2 and 3, the newest of each, and clears one for every node once confirmed', async () => {
    const [n1, n2, n3] = suite.nodes;
    const two = await connect(n2, { clientId: 'plant-retainer-n2' });
    const three = await connect(n3, { clientId: 'plant-retainer-n3' });
    suite.clients.push(two, three);
    // QoS 1: each is acknowledged once the cluster's bucket holds it.
    const hex = (text: string) => Buffer.from(text).toString('hex');
    await two.publishAsync('plant/line1/temp', '21.5', { qos: 1, retain: true });
    await two.publishAsync('plant/line1/raw', Buffer.from([0x00, 0xff, 0x41]), { qos: 1, retain: true });
    await two.publishAsync('plant/line2/state', 'starting', { qos: 1, retain: true });
    await two.publishAsync('plant/line3/state', 'stopped', { qos: 1, retain: true });
    // Replaced and cleared through another node than the one that set them.
    await three.publishAsync('plant/line2/state', 'running', { qos: 1, retain: true });
    await three.publishAsync('plant/line3/state', '', { qos: 1, retain: true });
    const current = [
      ['plant/line1/raw', '00ff41'],
      ['plant/line1/temp', hex('21.5')],
      ['plant/line2/state', hex('running')],
    ];
    const previews = new Map([
      ['plant/line1/raw', '\\x00\\xffA'],
      ['plant/line1/temp', '21.5'],
      ['plant/line2/state', 'running'],
    ]);

    // Every node's watch of the bucket catches up in its own time; then each holds the same messages,
    // each stored at the time the bucket took it.
    const views = async () => Promise.all([n1, n2, n3].map((node) => retainedView(node, 'plant/#')));
    const settled = (view: Map<string, { preview: string }>) =>
      view.size === previews.size && [...previews].every(([topic, p]) => view.get(topic)?.preview === p);
    await waitFor(async () => (await views()).every(settled), WAIT_MS);
    const [at1, at2, at3] = await views();
    for (const topic of previews.keys()) {
      const stored = at1?.get(topic)?.stored;
      assert.ok(typeof stored === 'string', `${topic} has a stored time on node 1`);
      assert.deepEqual(
        [at2?.get(topic)?.stored, at3?.get(topic)?.stored],
        [stored, stored],
        `${topic}: stored at the same time on every node`,
      );
    }

    const { context, page } = await signedInOnPhone(suite.browser, n1.http, ADMIN);
    await page.getByLabel('Look for').selectOption({ label: 'MQTT retained messages' });
    await page.getByLabel('Topic filter', { exact: true }).fill('plant/#');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    const result = page.locator('#find [data-lookup="mqtt-retained"]');
    await result.waitFor({ timeout: WAIT_MS });
    assert.equal(await result.locator('[data-field="Matched"]').innerText(), '3');
    const table = result.locator('[data-lookup-table="retained"]');
    const rows = table.locator('tbody tr');
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-row') ?? ''));
    assert.deepEqual(shown.sort(), [...previews.keys()]);
    for (const [topic, p] of previews) {
      const row = table.locator(`tr[data-row="${topic}"]`);
      assert.equal(await row.locator('[data-cell="preview"]').innerText(), p);
      // The page shows the time of day the bucket took it, as node 1 stored it.
      const stored = await page.evaluate(
        (iso) => new Date(iso).toLocaleTimeString('en-GB', { hour12: false }),
        at1?.get(topic)?.stored ?? '',
      );
      assert.equal(await row.locator('[data-cell="stored"]').innerText(), stored);
    }
    const scrollWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    assert.ok(scrollWidth <= PHONE.width, `the page is ${scrollWidth} px wide in a ${PHONE.width} px screen`);

    // One of them cleared from node 1's page, once the operator confirms.
    await page.getByLabel('Topic filter', { exact: true }).fill('plant/line1/temp');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    await result.locator('[data-field="Matched"]', { hasText: /^1$/ }).waitFor({ timeout: WAIT_MS });
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.accept();
      }),
    );
    await result.locator('[data-action="clear"]').click();
    assert.match(await asked, /Clear the retained message matching plant\/line1\/temp\?/);
    await page.locator('#find [data-lookup-outcome="not-found"]').waitFor({ timeout: WAIT_MS });
    await context.close();

    // A new subscriber on node 3 gets the two others as retained, not the cleared one.
    const others = current.filter(([topic]) => topic !== 'plant/line1/temp');
    await waitFor(
      async () => JSON.stringify(await retainedTo(n3, 'plant/#')) === JSON.stringify(others),
      WAIT_MS,
    );
    assert.deepEqual(await retainedTo(n3, 'plant/#'), others);
  });
});
