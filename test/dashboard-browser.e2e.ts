import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type MqttClient } from 'mqtt';
import { type Browser, type Page } from 'playwright-core';
import { type Wampy } from 'wampy';
import WebSocket from 'ws';
import { launchChromium } from './support/chromium.js';
import { DESKTOP, PHONE, screenshotPath } from './support/dashboard-page.js';
import { freePort } from './support/free-port.js';
import { Subscription, transportClient } from './support/graphql-clients.js';
import { connect } from './support/mqtt-helpers.js';
import { BOOT, chargePoint } from './support/ocpp.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { connectWampy, within } from './support/wamp-clients.js';
import { closed, opened, refusedStatus, waitFor } from './support/ws-helpers.js';

// A real Chromium on the dashboard of the broker as `npm start` composes it, with real MQTT, GraphQL,
// WAMP and OCPP clients: the page's figures are what the clients did, and what the page does (add an
// origin, close a connection) happens in the broker.

const ADMIN = 'dashboard-admin-token-0123456789';
const FOREIGN = 'https://app.example.com';
/** The page's own waits: the feed ticks once a second. */
const WAIT_MS = 10_000;

async function signIn(page: Page, base: string): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Admin token').fill(ADMIN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await live(page);
}

function live(page: Page): Promise<void> {
  return page.locator('.feed-status[data-state="live"]').waitFor({ timeout: WAIT_MS });
}

/** Waits until the element shows exactly `text`. */
function shows(page: Page, selector: string, text: string): Promise<void> {
  const exact = new RegExp(`^\\s*${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`);
  return page.locator(selector, { hasText: exact }).first().waitFor({ timeout: WAIT_MS });
}

describe('dashboard in Chromium, against live traffic', () => {
  let port = 0;
  let broker: TestBroker | undefined;
  let browser: Browser | undefined;
  let base = '';
  const closers: (() => unknown)[] = [];

  before(async () => {
    port = await freePort();
    broker = await startDefaultBroker({ port, admin: { tokens: [ADMIN] } });
    base = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
  });

  after(async () => {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
    await browser?.close();
    await broker?.close();
  });

  it('shows the 401 page, not a blank one, without a token or with a wrong one', async () => {
    const page = await (browser as Browser).newPage();
    await page.goto(`${base}/dashboard`);
    await page
      .getByRole('heading', { name: '401 · An admin token is required' })
      .waitFor({ timeout: WAIT_MS });
    assert.match((await page.getByRole('alert').textContent()) ?? '', /admin bearer token is required/);
    await page.getByLabel('Admin token').fill('not-the-admin-token-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'The bearer token was not accepted' })
      .waitFor({ timeout: WAIT_MS });
    await page.close();
  });

  it('shows what the clients did, and acts on the broker', async () => {
    const ws = `ws://127.0.0.1:${port}`;
    const page = await (browser as Browser).newPage({ viewport: DESKTOP });
    await signIn(page, base);

    const mqtt: MqttClient = await connect({ url: ws }, { clientId: 'dash-mqtt' });
    closers.push(() => mqtt.endAsync());
    await mqtt.subscribeAsync('dash/#', { qos: 1 });
    await mqtt.publishAsync('dash/retained', 'kept', { qos: 1, retain: true });
    const graphql = transportClient(`${ws}/graphql`);
    closers.push(() => graphql.dispose());
    const subscription = new Subscription(
      graphql,
      'subscription { topic(filter: "dash/#") { topic payload } }',
    );
    closers.push(() => subscription.stop());
    const wampy: Wampy = await connectWampy(`${ws}/ws`);
    closers.push(() => wampy.disconnect());
    await within(
      'register',
      wampy.register('com.example.add', () => ({ argsList: [0] })),
    );
    await within(
      'subscribe',
      wampy.subscribe('com.example.news', () => undefined),
    );
    const cp = chargePoint(ws, 'CP-DASH-1');
    closers.push(() => cp.close({ force: true }));
    await cp.connect();
    await cp.call('BootNotification', BOOT);
    await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available' });

    // Connections by endpoint and subprotocol, and the modules' own counts.
    await shows(page, 'tr[data-endpoint="/mqtt"][data-subprotocol="mqtt"] [data-figure="open"]', '1');
    await shows(
      page,
      'tr[data-endpoint="/graphql"][data-subprotocol="graphql-transport-ws"] [data-figure="open"]',
      '1',
    );
    await shows(page, 'tr[data-endpoint="/ws"][data-subprotocol="wamp.2.json"] [data-figure="open"]', '1');
    await shows(
      page,
      'tr[data-endpoint="/ocpp/:chargePointId"][data-subprotocol="ocpp1.6"] [data-figure="open"]',
      '1',
    );
    await shows(page, '.tile [data-figure="open"]', '4');
    await shows(page, '[data-figure="mqtt.sessions"]', '1');
    await shows(page, '[data-figure="mqtt.subscriptions"]', '1');
    await shows(page, '[data-figure="wamp.2.json.sessions"]', '1');
    await shows(page, '[data-figure="wamp.2.json.registrations"]', '1');
    await shows(page, '[data-figure="wamp.2.json.subscriptions"]', '1');
    await shows(page, '[data-figure="ocpp1.6.chargePoints"]', '1');
    await shows(page, '[data-figure="accepted"]', '4');
    // The busiest topics clients publish to on this node: so far the one retained message.
    await shows(
      page,
      '[data-panel="mqtt-busiest-topics"] tr[data-row="dash/retained"] [data-cell="messages"]',
      '1',
    );
    assert.match(
      (await page.locator('section#panel-mqtt-busiest-topics').textContent()) ?? '',
      /Busiest MQTT topics on this node/,
    );

    // A charge point's status change.
    await shows(
      page,
      '[data-panel="charge-points"] tr[data-row="CP-DASH-1"] [data-chip="1"]',
      '1: Available',
    );
    const started = (await cp.call('StartTransaction', {
      connectorId: 1,
      idTag: 'TAG-1',
      meterStart: 0,
      timestamp: new Date().toISOString(),
    })) as { transactionId: number };
    await cp.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Charging' });
    await cp.call('Heartbeat', {});
    await shows(page, '[data-panel="charge-points"] tr[data-row="CP-DASH-1"] [data-chip="1"]', '1: Charging');
    const row = page.locator('[data-panel="charge-points"] tr[data-row="CP-DASH-1"]');
    assert.match(
      (await row.locator('[data-cell="transactions"]').textContent()) ?? '',
      new RegExp(`^#${started.transactionId} on 1 since `),
    );
    assert.match((await row.locator('[data-cell="lastHeartbeat"]').textContent()) ?? '', /^\d\d:\d\d:\d\d$/);
    // The nav names each module's panel by its title and leads to it.
    const link = page.locator('nav a', { hasText: 'Charge points' });
    assert.equal(await link.getAttribute('href'), '#panel-charge-points');
    assert.equal(await page.locator('section#panel-charge-points').count(), 1);

    // A refused handshake, with its reason: /chat takes same-origin pages only.
    const foreign = new WebSocket(`${ws}/chat`, 'chat.v1', { origin: FOREIGN });
    assert.equal(await refusedStatus(foreign), 403);
    await shows(page, '[data-figure="refused"]', '1');
    const refusal = page.locator('tr.refusal').first();
    await refusal.filter({ hasText: 'Origin not allowed' }).waitFor({ timeout: WAIT_MS });
    assert.match(
      (await refusal.textContent()) ?? '',
      /403\/chatOrigin not allowed: The Origin of this request is not allowed here\./,
    );
    // The same refusal again is counted on its row, not listed again.
    for (let i = 0; i < 2; i++) {
      const again = new WebSocket(`${ws}/chat`, 'chat.v1', { origin: FOREIGN });
      assert.equal(await refusedStatus(again), 403);
    }
    await shows(page, '[data-figure="refused"]', '3');
    await shows(page, 'tr.refusal [data-cell="count"]', '3');
    assert.equal(await page.locator('tr.refusal').filter({ hasText: 'Origin not allowed' }).count(), 1);

    // A ninth status in the handshake chart (a path nobody serves): no two of its lines look alike.
    assert.equal(await refusedStatus(new WebSocket(`${ws}/nowhere`, 'chat.v1')), 404);
    await page.locator('.u-legend .u-series', { hasText: '404' }).first().waitFor({ timeout: WAIT_MS });
    const looks = (await page.evaluate(`[...document.querySelectorAll('.u-legend')].map((legend) =>
      [...legend.querySelectorAll('.u-series .u-marker')].map((m) => {
        const style = getComputedStyle(m);
        return style.borderTopColor + ' ' + style.borderTopStyle;
      }))`)) as string[][];
    assert.ok(looks.some((markers) => markers.length > 8));
    for (const markers of looks) assert.equal(new Set(markers).size, markers.length, markers.join(', '));

    // Adding the origin through the page lets the same handshake in.
    await page.getByLabel('Origin', { exact: true }).fill(FOREIGN);
    await page.locator('#origin-endpoint').selectOption('/chat');
    await page.getByRole('button', { name: 'Add origin' }).click();
    await page.locator(`li[data-origin="${FOREIGN}"]`).waitFor({ timeout: WAIT_MS });
    const chat = new WebSocket(`${ws}/chat`, 'chat.v1', { origin: FOREIGN });
    await opened(chat);

    // Closing it through the page: the client gets the close.
    const goodbye = closed(chat, WAIT_MS);
    await page.locator('#filter-endpoint').selectOption('/chat');
    await page.getByRole('button', { name: 'Apply filters and refresh' }).click();
    const close = page.getByRole('button', { name: /^Close connection .* \(chat\.v1 on \/chat\)$/ });
    await close.waitFor({ timeout: WAIT_MS });
    assert.equal(await page.locator('tr[data-connection]').count(), 1);
    await close.click();
    assert.deepEqual(await goodbye, { code: 1000, reason: 'closed from the dashboard' });
    await page.getByText('No open connection matches.').waitFor({ timeout: WAIT_MS });

    // A test message published from the page reaches the MQTT subscriber.
    const published = new Promise<string>((resolve) =>
      mqtt.on('message', (topic, payload) => {
        if (topic === 'dash/from-page') resolve(payload.toString());
      }),
    );
    await page.getByLabel('Topic', { exact: true }).fill('dash/from-page');
    await page.getByLabel('Payload', { exact: true }).fill('hello from the page');
    await page.getByRole('button', { name: 'Publish' }).click();
    assert.equal(await within('the published message', published, WAIT_MS), 'hello from the page');
    await page
      .getByRole('status')
      .filter({ hasText: /^Published to dash\/from-page: reached \d+ subscriber\(s\) here\.$/ })
      .waitFor({ timeout: WAIT_MS });
    await page.getByLabel('Topic', { exact: true }).fill('$SYS/broker/x');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /may not publish to "\$SYS\/broker\/x"/ })
      .waitFor({ timeout: WAIT_MS });

    // A token created through the page is shown once; revoked through the page, it stops working.
    const asToken = async (token: string): Promise<number> =>
      (await fetch(`${base}/admin/v1/endpoints`, { headers: { Authorization: `Bearer ${token}` } })).status;
    await page.getByLabel('Token name').fill('dash-created');
    await page.getByLabel('Scopes').fill('endpoint:/chat');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = page.locator('.secret code');
    await secret.waitFor({ timeout: WAIT_MS });
    const token = (await secret.textContent()) ?? '';
    assert.equal(await asToken(token), 403, 'a valid credential without the admin scope');
    await page.getByRole('button', { name: 'Done' }).click();
    assert.equal(await page.locator('.secret').count(), 0);
    await page.getByRole('button', { name: 'Revoke credential dash-created' }).click();
    await page
      .locator('li[data-credential="dash-created"]', { hasText: 'revoked' })
      .waitFor({ timeout: WAIT_MS });
    await waitFor(async () => (await asToken(token)) === 401, WAIT_MS);

    // Some traffic for the pictures' charts.
    const traffic = setInterval(() => void mqtt.publishAsync('dash/load', 'x').catch(() => undefined), 100);
    await screenshots(browser as Browser, base).finally(() => clearInterval(traffic));
    await page.close();
  });

  it("fits a phone's width: no sideways scroll, and a connection's Close button on screen", async () => {
    const chat = new WebSocket(`ws://127.0.0.1:${port}/chat`, 'chat.v1');
    chat.on('error', () => undefined);
    await opened(chat);
    closers.push(() => chat.terminate());
    const context = await (browser as Browser).newContext({
      viewport: PHONE,
      isMobile: true,
    });
    const page = await context.newPage();
    await signIn(page, base);
    const close = page.getByRole('button', { name: /^Close connection .* \(chat\.v1 on \/chat\)$/ });
    await close.waitFor({ timeout: WAIT_MS });
    await page.waitForTimeout(1500);
    const [scrollWidth, clientWidth] = (await page.evaluate(
      '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
    )) as [number, number];
    assert.ok(scrollWidth <= clientWidth, `the page is ${scrollWidth} px wide in a ${clientWidth} px screen`);
    await close.scrollIntoViewIfNeeded();
    const box = await close.boundingBox();
    assert.ok(box !== null && box.x >= 0 && box.x + box.width <= clientWidth, JSON.stringify(box));
    await context.close();
  });

  it('browses the retained messages matching a filter in Find, a binary payload escaped, and clears them once confirmed', async () => {
    const mqtt: MqttClient = await connect({ url: `ws://127.0.0.1:${port}` }, { clientId: 'dash-retainer' });
    await mqtt.publishAsync('browse/site/a', 'hello there', { qos: 1, retain: true });
    await mqtt.publishAsync('browse/site/b', Buffer.from([0x00, 0xff, 0x41]), { qos: 1, retain: true });
    // Gone before the page looks: the tests below count one MQTT session.
    await mqtt.endAsync();
    const page = await (browser as Browser).newPage({ viewport: DESKTOP });
    await signIn(page, base);

    await page.getByLabel('Look for').selectOption({ label: 'MQTT retained messages' });
    await page.getByLabel('Topic filter', { exact: true }).fill('browse/site/#');
    await page.getByRole('button', { name: 'Find', exact: true }).click();
    const result = page.locator('#find [data-lookup="mqtt-retained"]');
    await result.waitFor({ timeout: WAIT_MS });
    assert.equal(await result.locator('[data-field="Matched"]').innerText(), '2');
    const table = result.locator('[data-lookup-table="retained"]');
    assert.match(await table.locator('h4').innerText(), /Retained messages \(2\)/);
    const text = table.locator('tr[data-row="browse/site/a"]');
    assert.equal(await text.locator('[data-cell="preview"]').innerText(), 'hello there');
    assert.equal(await text.locator('[data-cell="bytes"]').innerText(), '11');
    const binary = table.locator('tr[data-row="browse/site/b"]');
    assert.equal(await binary.locator('[data-cell="preview"]').innerText(), '\\x00\\xffA');

    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (dialog) => {
        resolve(dialog.message());
        void dialog.accept();
      }),
    );
    await result.locator('[data-action="clear"]').click();
    assert.match(await asked, /Clear 2 retained messages matching browse\/site\/#/);
    // The page asks again once done: nothing matches now.
    await page.locator('#find [data-lookup-outcome="not-found"]').waitFor({ timeout: WAIT_MS });
    await page.close();
  });

  it('raises an alarm on a surge of refused handshakes, as a banner, a metric and a log line, and clears it', async () => {
    const page = await (browser as Browser).newPage({ viewport: DESKTOP });
    await signIn(page, base);
    // 300 refusals in a second or two: at least 100 fall in one 5 s check, 20 a second, however the
    // address's handshake rate refuses them.
    const refused = Array.from({ length: 300 }, () => {
      // Not FOREIGN: the first test added that origin to the allowlist.
      const foreign = new WebSocket(`ws://127.0.0.1:${port}/chat`, 'chat.v1', {
        origin: 'https://other.example',
      });
      return refusedStatus(foreign).catch(() => 0);
    });
    // Refused with 403 (origin), 429 (rate), or closed as they arrived (far past the rate): all count.
    assert.ok((await Promise.all(refused)).every((status) => [0, 403, 429].includes(status)));
    const banner = page.locator('.alarm-banner [data-alarm="refusal-surge"]');
    const metrics = async (): Promise<string> =>
      (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${ADMIN}` } })).text();
    await banner.waitFor({ timeout: 15_000 }).catch(async (err: Error) => {
      const lines = (await metrics()).split('\n').filter((l) => /refus|alarm|handshakes_total/.test(l));
      throw new Error(`${err.message}\n${lines.join('\n')}`);
    });
    assert.match(await metrics(), /broker_alarm_active\{alarm="refusal-surge"\} 1/);
    assert.ok(
      (broker as TestBroker).logLines().some((l) => l['msg'] === 'alarm raised: Refused handshakes surging'),
    );
    // Quiet again: cleared at a later check, the banner gone and the row kept as cleared.
    await banner.waitFor({ state: 'detached', timeout: 20_000 });
    await page
      .locator('[data-alarm-row="refusal-surge"][data-state="cleared"]')
      .waitFor({ timeout: WAIT_MS });
    assert.match(await metrics(), /broker_alarm_active\{alarm="refusal-surge"\} 0/);
    await page.close();
  });

  it('says when the feed drops, and recovers when the broker comes back', async () => {
    const page = await (browser as Browser).newPage();
    await signIn(page, base);
    // By keyboard: the first stop is the skip link, which takes the focus to the figures.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.textContent'), 'Skip to the figures');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate('document.activeElement.id'), 'main');
    await shows(page, '[data-figure="mqtt.sessions"]', '1');
    await (broker as TestBroker).close();
    await page
      .locator('.feed-status[data-state="lost"]', { hasText: /^Feed lost \(.+\), reconnecting in \d+ s$/ })
      .waitFor({ timeout: WAIT_MS });
    broker = await startDefaultBroker({ port, admin: { tokens: [ADMIN] } });
    await live(page);
    // The new broker's figures: nobody there yet, then this client.
    await shows(page, '[data-figure="mqtt.sessions"]', '0');
    const mqtt = await connect({ url: `ws://127.0.0.1:${port}` }, { clientId: 'after-restart' });
    closers.push(() => mqtt.endAsync());
    await shows(page, '[data-figure="mqtt.sessions"]', '1');
    await page.close();
  });
});

/** The page at desktop and phone widths, light and dark, after a few seconds of history. */
async function screenshots(browser: Browser, base: string): Promise<void> {
  const sizes = { desktop: DESKTOP, phone: PHONE };
  for (const [name, viewport] of Object.entries(sizes)) {
    for (const colorScheme of ['light', 'dark'] as const) {
      const context = await browser.newContext({ viewport, colorScheme, isMobile: name === 'phone' });
      const page = await context.newPage();
      await signIn(page, base);
      await page.waitForTimeout(6000);
      await page.screenshot({
        path: screenshotPath(`dashboard-${name}-${colorScheme}.png`),
        fullPage: name === 'desktop',
      });
      await context.close();
    }
  }
  await findAndTraceScreenshots(browser, base);
}

/** Find showing the MQTT session dash-mqtt, and Trace following a client that publishes to itself. */
async function findAndTraceScreenshots(browser: Browser, base: string): Promise<void> {
  const context = await browser.newContext({ viewport: DESKTOP });
  const page = await context.newPage();
  await signIn(page, base);
  await page.getByLabel('Look for').selectOption({ label: 'MQTT session' });
  await page.getByLabel('Client id', { exact: true }).fill('dash-mqtt');
  await page.getByRole('button', { name: 'Find', exact: true }).click();
  await page.locator('#find [data-lookup="mqtt-session"]').waitFor({ timeout: WAIT_MS });
  await page.locator('#find').screenshot({ path: screenshotPath('dashboard-find.png') });

  await page.getByLabel('Follow').selectOption({ label: 'MQTT client' });
  await page.getByLabel('Client id to trace').fill('dash-traced');
  await page.getByRole('button', { name: 'Start', exact: true }).click();
  const shown = page.locator('#trace [data-trace-shown]');
  await shown.locator('[data-trace-state="running"]').waitFor({ timeout: WAIT_MS });
  const traced = await connect({ url: base.replace(/^http/, 'ws') }, { clientId: 'dash-traced' });
  await traced.subscribeAsync('dash/traced', { qos: 1 });
  await traced.publishAsync('dash/traced', '21.5', { qos: 1 });
  await traced.endAsync();
  await shown
    .locator('tr[data-event="delivered"][data-topic="dash/traced"]')
    .first()
    .waitFor({ timeout: WAIT_MS });
  await page.locator('#trace').screenshot({ path: screenshotPath('dashboard-trace.png') });
  await shown.locator('[data-trace-stop]').click();
  await shown.locator('[data-trace-state="ended"]').waitFor({ timeout: WAIT_MS });
  await context.close();
}
