import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { startNginx, type RunningProxy } from './support/proxies.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';

/** Opens a WebSocket to its own origin's /echo, sends one message, records what happens. */
const PAGE = `<!doctype html>
<html><head><meta charset="utf-8"><title>through the proxy</title></head><body><script>
  window.probe = { events: [], done: false };
  const ws = new WebSocket(\`ws://\${location.host}/echo\`, 'echo.v1');
  ws.onopen = () => { window.probe.events.push('open'); ws.send('hello'); };
  ws.onmessage = (e) => { window.probe.events.push('message ' + e.data); ws.close(1000); };
  ws.onerror = () => window.probe.events.push('error');
  ws.onclose = (e) => { window.probe.events.push('close ' + e.code); window.probe.done = true; };
</script></body></html>`;

/** A real Chromium loading a page that nginx serves, whose WebSocket goes through nginx to the broker. */
describe('a browser page served through nginx (same-origin check, no allowlist)', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let shipped: RunningProxy;
  let stock: RunningProxy;
  let browser: Browser;

  before(async () => {
    broker = await startTestBroker({
      http: { trustedProxies: ['127.0.0.1'] },
      // No origins listed: only same-origin pages may connect.
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
    });
    const page = { name: 'probe.html', html: PAGE };
    shipped = await startNginx({ upstreams: [broker.port], page });
    stock = await startNginx({ upstreams: [broker.port], page, withoutForwardedHost: true });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await Promise.all([shipped?.stop(), stock?.stop()]);
    await broker?.close();
  });

  async function visit(proxy: RunningProxy): Promise<string[]> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${proxy.http}/probe.html`);
      await page.waitForFunction('window.probe.done === true', undefined, { timeout: 10_000 });
      return (await page.evaluate('window.probe.events')) as string[];
    } finally {
      await context.close();
    }
  }

  it('with the shipped configuration the page connects and is echoed', async () => {
    assert.deepEqual(await visit(shipped), ['open', 'message hello', 'close 1000']);
  });

  it('with the usual snippet (Host without its port, no X-Forwarded-Host) the broker refuses it (403), as users met', async () => {
    assert.deepEqual(await visit(stock), ['error', 'close 1006']);
    const refused = broker.logLines().filter((l) => l['msg'] === 'handshake' && l['status'] === 403);
    assert.ok(refused.some((l) => l['reason'] === 'Origin not allowed'));
  });
});
