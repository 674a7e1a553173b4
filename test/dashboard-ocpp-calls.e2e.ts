import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRPCError } from 'ocpp-rpc';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { DESKTOP, screenshotPath, signedIn, signedInOnPhone } from './support/dashboard-page.js';
import { freePort } from './support/free-port.js';
import { BOOT, chargePoint } from './support/ocpp.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';

// A real Chromium on the dashboard of the broker as `npm start` composes it, and a real ocpp-rpc
// charge point (strict mode: what it is sent and what it answers are held to the 1.6 schemas): the
// charge points panel's call form sends it central-system calls through the admin API and shows what
// the API answers, the charge point's CALLRESULT or the problem, as it came. The page knows nothing of
// OCPP: the form is what the OCPP module's panel declares.

const ADMIN = 'dashboard-calls-admin-token-0123456789';
const IDENTITY = 'CP-CALL-1';
/** The page's own waits: the feed ticks once a second. */
const WAIT_MS = 10_000;
/** A configuration value long enough to widen a phone's page if the answer did not wrap. */
const LONG_VALUE = `https://backend.example.com/${'very-long-path-segment-'.repeat(12)}`;

/** The call form, once the panel lists the charge point (the form offers its identity). */
async function callForm(page: Page): Promise<Locator> {
  await page.locator(`[data-panel="charge-points"] tr[data-row="${IDENTITY}"]`).waitFor({ timeout: WAIT_MS });
  const form = page.locator('[data-panel="charge-points"] [data-call-form="charge-points"]');
  await form.locator(`datalist option[value="${IDENTITY}"]`).waitFor({ state: 'attached', timeout: WAIT_MS });
  return form;
}

/** Sends `action` to `identity` with `payload` (the action's example when undefined); resolves with the answer's area. */
async function send(form: Locator, identity: string, action: string, payload?: string): Promise<Locator> {
  await form.getByLabel('Charge point identity').fill(identity);
  await form.getByLabel('Action').selectOption(action);
  if (payload !== undefined) await form.getByLabel('Payload (JSON)').fill(payload);
  // The answer of this call, not the one before it: the form numbers them.
  const call = Number(await form.getAttribute('data-calls')) + 1;
  await form.getByRole('button', { name: 'Send' }).click();
  const answer = form.locator(`[data-call="${call}"]`);
  await answer.waitFor({ timeout: WAIT_MS });
  return answer;
}

async function bodyOf(answer: Locator): Promise<unknown> {
  return JSON.parse(await answer.locator('[data-call-body]').innerText());
}

describe('dashboard in Chromium: calls to a charge point from the charge points panel', () => {
  let broker: TestBroker | undefined;
  let browser: Browser | undefined;
  let cp: ReturnType<typeof chargePoint> | undefined;
  let base = '';
  const received: [string, unknown][] = [];

  before(async () => {
    const port = await freePort();
    broker = await startDefaultBroker({ port, admin: { tokens: [ADMIN] } });
    base = `http://127.0.0.1:${port}`;
    cp = chargePoint(`ws://127.0.0.1:${port}`, IDENTITY);
    cp.handle('TriggerMessage', async ({ params }) => {
      received.push(['TriggerMessage', params]);
      return { status: 'Accepted' };
    });
    cp.handle('Reset', async ({ params }) => {
      received.push(['Reset', params]);
      throw createRPCError('NotSupported', 'no resets on this one', { reason: 'test' });
    });
    cp.handle('GetConfiguration', async () => ({
      configurationKey: [{ key: 'BackendUrl', readonly: true, value: LONG_VALUE }],
    }));
    await cp.connect();
    await cp.call('BootNotification', BOOT);
    browser = await launchChromium();
  });

  after(async () => {
    await cp?.close({ force: true });
    await browser?.close();
    await broker?.close();
  });

  it("sends the chosen call, the charge point's handler gets it, and the page shows its answer", async () => {
    const { context, page } = await signedIn(browser as Browser, base, ADMIN, DESKTOP);
    const form = await callForm(page);

    // Each action starts from the module's example payload.
    await form.getByLabel('Action').selectOption('TriggerMessage');
    assert.deepEqual(JSON.parse(await form.getByLabel('Payload (JSON)').inputValue()), {
      requestedMessage: 'Heartbeat',
    });
    await form.getByLabel('Action').selectOption('Reset');
    assert.deepEqual(JSON.parse(await form.getByLabel('Payload (JSON)').inputValue()), { type: 'Soft' });

    const answer = await send(form, IDENTITY, 'TriggerMessage');
    assert.equal(await answer.getAttribute('data-call-status'), '200');
    assert.equal(await answer.getAttribute('role'), 'status');
    assert.match(await answer.locator('p').innerText(), /^200 OK$/);
    assert.deepEqual(await bodyOf(answer), { status: 'Accepted' });
    assert.deepEqual(received.at(-1), ['TriggerMessage', { requestedMessage: 'Heartbeat' }]);

    // An edited payload goes as it was typed.
    const again = await send(
      form,
      IDENTITY,
      'TriggerMessage',
      '{"requestedMessage":"StatusNotification","connectorId":1}',
    );
    assert.equal(await again.getAttribute('data-call-status'), '200');
    assert.deepEqual(received.at(-1), [
      'TriggerMessage',
      { requestedMessage: 'StatusNotification', connectorId: 1 },
    ]);
    // The picture in docs/ocpp.md: the panel with the call form and its answer.
    await page
      .locator('section#panel-charge-points')
      .screenshot({ path: screenshotPath('dashboard-ocpp-calls.png') });
    await context.close();
  });

  it('shows each failure readably: CALLERROR, not connected, a payload the schema refuses, not JSON', async () => {
    const { context, page } = await signedIn(browser as Browser, base, ADMIN, DESKTOP);
    const form = await callForm(page);

    // The charge point answers CALLERROR: its code, description and details.
    const callError = await send(form, IDENTITY, 'Reset');
    assert.equal(await callError.getAttribute('data-call-status'), '502');
    assert.equal(await callError.getAttribute('role'), 'alert');
    assert.match(await callError.locator('p').innerText(), /^502 Charge point answered CALLERROR$/);
    const problem = (await bodyOf(callError)) as Record<string, unknown>;
    assert.equal(problem['status'], 502);
    assert.deepEqual(problem['ocppError'], {
      code: 'NotSupported',
      description: 'no resets on this one',
      details: { reason: 'test' },
    });
    assert.deepEqual(received.at(-1), ['Reset', { type: 'Soft' }]);

    // An identity nobody is connected as.
    const offline = await send(form, 'CP-NOBODY', 'TriggerMessage');
    assert.equal(await offline.getAttribute('data-call-status'), '404');
    assert.match(await offline.locator('p').innerText(), /^404 Charge point not connected$/);
    assert.match(await offline.innerText(), /Charge point CP-NOBODY is not connected\./);

    // A payload the action's schema refuses: 400 naming the field; the charge point is not called.
    const calls = received.length;
    const invalid = await send(form, IDENTITY, 'Reset', '{"type":"Warm"}');
    assert.equal(await invalid.getAttribute('data-call-status'), '400');
    const errors = ((await bodyOf(invalid)) as { errors: { field: string; messages: string[] }[] }).errors;
    assert.deepEqual(
      errors.map((e) => e.field),
      ['type'],
    );
    assert.match(errors[0]?.messages.join() ?? '', /PropertyConstraintViolation/);
    assert.equal(received.length, calls);

    // Not JSON at all: said on the page, nothing sent.
    const notJson = await send(form, IDENTITY, 'Reset', '{type: Soft}');
    assert.match(await notJson.innerText(), /^The payload is not JSON: /);
    assert.equal(received.length, calls);
    await context.close();
  });

  it("fits a phone's width with a long answer shown: no sideways scroll", async () => {
    const { context, page } = await signedInOnPhone(browser as Browser, base, ADMIN);
    const form = await callForm(page);
    const answer = await send(form, IDENTITY, 'GetConfiguration');
    assert.equal(await answer.getAttribute('data-call-status'), '200');
    assert.equal(
      ((await bodyOf(answer)) as { configurationKey: { value: string }[] }).configurationKey[0]?.value,
      LONG_VALUE,
    );
    const [scrollWidth, clientWidth] = (await page.evaluate(
      '[document.documentElement.scrollWidth, document.documentElement.clientWidth]',
    )) as [number, number];
    assert.ok(scrollWidth <= clientWidth, `the page is ${scrollWidth} px wide in a ${clientWidth} px screen`);
    for (const control of [
      form.getByRole('button', { name: 'Send' }),
      form.getByLabel('Payload (JSON)'),
      answer,
    ]) {
      const box = await control.boundingBox();
      assert.ok(box !== null && box.x >= 0 && box.x + box.width <= clientWidth, JSON.stringify(box));
    }
    await context.close();
  });

  it('is backed by the admin API: the panel calls are listed for a script, and in the OpenAPI document', async () => {
    const auth = { Authorization: `Bearer ${ADMIN}` };
    const res = await fetch(`${base}/admin/v1/dashboard/panel-calls`, { headers: auth });
    assert.equal(res.status, 200);
    const [calls] = (await res.json()) as {
      panel: string;
      route: string;
      actions: { id: string; example: unknown }[];
    }[];
    assert.ok(calls !== undefined);
    assert.equal(calls.panel, 'charge-points');
    assert.equal(calls.route, 'charge-points/{target}/calls/{action}');
    assert.deepEqual(calls.actions.find((a) => a.id === 'Reset')?.example, { type: 'Soft' });
    assert.equal((await fetch(`${base}/admin/v1/dashboard/panel-calls`)).status, 401);
    const openapi = (await (await fetch(`${base}/admin/openapi.json`, { headers: auth })).json()) as {
      paths: Record<string, unknown>;
    };
    assert.ok('/admin/v1/dashboard/panel-calls' in openapi.paths);
  });
});
