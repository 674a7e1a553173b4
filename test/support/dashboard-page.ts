import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type MqttClient } from 'mqtt';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { launchChromium } from './chromium.js';
import { type BrokerNode, TestCluster } from './cluster.js';

/**
 * Where the picture `name` of the dashboard goes: docs/ (what docs/operations.md and docs/ocpp.md show)
 * with UPDATE_SCREENSHOTS=1, else dist/screenshots/ beside the build.
 */
export function screenshotPath(name: string): string {
  const dir = fileURLToPath(
    new URL(process.env['UPDATE_SCREENSHOTS'] ? '../../../docs/' : '../../screenshots/', import.meta.url),
  );
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}

/** A phone's screen, where the dashboard must not scroll sideways. */
export const PHONE = { width: 390, height: 844 };

/** A desktop's window. */
export const DESKTOP = { width: 1280, height: 900 };

/**
 * The dashboard at `base` in a new browser context of `viewport` (a phone's, touch and all, when
 * `isMobile`), signed in with the admin `token`, once its live feed is up. The caller closes the context.
 */
export async function signedIn(
  browser: Browser,
  base: string,
  token: string,
  viewport: { width: number; height: number },
  isMobile = false,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, isMobile });
  const page = await context.newPage();
  await page.goto(`${base}/dashboard`);
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('.feed-status[data-state="live"]').waitFor({ timeout: 10_000 });
  return { context, page };
}

/** signedIn on a phone's screen. */
export function signedInOnPhone(
  browser: Browser,
  base: string,
  token: string,
): Promise<{ context: BrowserContext; page: Page }> {
  return signedIn(browser, base, token, PHONE, true);
}

/** What a console suite on a three-node cluster works with, once its `before` has run. */
export interface ConsoleCluster {
  readonly nodes: [BrokerNode, BrokerNode, BrokerNode];
  readonly browser: Browser;
  /** The MQTT clients a test opens: each is ended after the suite. */
  readonly clients: MqttClient[];
}

/**
 * A three-node cluster that admits the admin `token`, and a Chromium, started before the tests of the
 * calling `describe` and closed after them, with every MQTT client pushed on `clients`.
 */
export function consoleCluster(token: string): ConsoleCluster {
  let cluster: TestCluster | undefined;
  let browser: Browser | undefined;
  const clients: MqttClient[] = [];
  before(async () => {
    cluster = await TestCluster.start(3, { config: { admin: { tokens: [token] } } });
    browser = await launchChromium();
  });
  after(async () => {
    for (const client of clients) await client.endAsync(true);
    await browser?.close();
    await cluster?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("the console cluster starts in the suite's before hook");
    return value;
  };
  return {
    get nodes() {
      return started(cluster).nodes as [BrokerNode, BrokerNode, BrokerNode];
    },
    get browser() {
      return started(browser);
    },
    clients,
  };
}
