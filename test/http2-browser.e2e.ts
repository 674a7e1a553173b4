import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { selfSignedCertificate } from './support/self-signed.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';

/** In the page: a WebSocket to its own origin's /echo, one message echoed, what happened. */
const ECHO_OVER_WSS = `new Promise((resolve) => {
  const seen = [];
  const ws = new WebSocket(\`wss://\${location.host}/echo\`, 'echo.v1');
  ws.onopen = () => { seen.push('open ' + ws.protocol); ws.send('hello over h2'); };
  ws.onmessage = (e) => { seen.push('message ' + e.data); ws.close(1000); };
  ws.onerror = () => seen.push('error');
  ws.onclose = (e) => { seen.push('close ' + e.code); resolve(seen); };
})`;

/**
 * Chromium opens a WebSocket over HTTP/2 (RFC 8441) where it already has an HTTP/2 connection to the
 * origin whose server advertised SETTINGS_ENABLE_CONNECT_PROTOCOL: the page is loaded from the
 * broker over h2 first (an endpoint's plain page, through the bridge to the application).
 */
describe('Chromium, WebSocket over HTTP/2 with TLS (http.http2)', { timeout: 60_000 }, () => {
  let broker: TestBroker;
  let browser: Browser;

  before(async () => {
    broker = await startTestBroker({
      tls: selfSignedCertificate(),
      http: { http2: true },
      // No origins listed: the page's own origin is the broker's.
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'] }],
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await broker?.close();
  });

  it('the page arrives over h2, and its same-origin WebSocket shares that connection', async () => {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      const response = await page.goto(`https://127.0.0.1:${broker.port}/echo`);
      assert.equal(response?.status(), 200);
      const protocol = await page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol");
      assert.equal(protocol, 'h2');
      const events = (await page.evaluate(ECHO_OVER_WSS)) as string[];
      assert.deepEqual(events, ['open echo.v1', 'message hello over h2', 'close 1000']);
      const accepted = broker
        .logLines()
        .filter((l) => l['msg'] === 'handshake' && /^accepted/.test(String(l['reason'])));
      assert.deepEqual(
        accepted.map((l) => [l['status'], l['reason']]),
        [[200, 'accepted over HTTP/2']],
      );
    } finally {
      await context.close();
    }
  });
});
