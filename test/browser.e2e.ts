import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Browser, type BrowserContext } from 'playwright-core';
import { launchChromium } from './support/chromium.js';
import { startStaticPageServer, type StaticPageServer } from './support/static-page-server.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';

// A real Chromium against the real broker: what a browser's WebSocket API sees for accepted and
// refused handshakes, and proof that the broker checks the Origin and the cookie the browser sends.

type ProbeEvent =
  | { readonly type: 'open'; readonly protocol: string }
  | { readonly type: 'message'; readonly data: string }
  | { readonly type: 'error' }
  | { readonly type: 'close'; readonly code: number; readonly wasClean: boolean };

/**
 * The page under test. It opens `new WebSocket(?ws, ?protocol...)`, records every event, sends
 * `?send` (if given) on open, closes with 1000 after the first message, and sets `probe.done` on
 * close. The tsconfig has no DOM lib, so the page code is plain text here.
 */
const PROBE_PAGE = `<!doctype html>
<html>
  <head><meta charset="utf-8"><title>ws probe</title></head>
  <body>
    <script>
      window.probe = { events: [], done: false };
      const params = new URLSearchParams(location.search);
      const ws = new WebSocket(params.get('ws'), params.getAll('protocol'));
      let gotMessage = false;
      ws.onopen = () => {
        window.probe.events.push({ type: 'open', protocol: ws.protocol });
        if (params.has('send')) ws.send(params.get('send'));
      };
      ws.onerror = () => window.probe.events.push({ type: 'error' });
      ws.onmessage = (event) => {
        window.probe.events.push({ type: 'message', data: String(event.data) });
        if (!gotMessage) ws.close(1000, 'probe done');
        gotMessage = true;
      };
      ws.onclose = (event) => {
        window.probe.events.push({ type: 'close', code: event.code, wasClean: event.wasClean });
        window.probe.done = true;
      };
    </script>
  </body>
</html>
`;

const WAIT_MS = 5000;
const REFUSED: readonly ProbeEvent[] = [{ type: 'error' }, { type: 'close', code: 1006, wasClean: false }];

describe('browser (Chromium) against the broker', () => {
  let broker: TestBroker | undefined;
  let allowed: StaticPageServer | undefined;
  let foreign: StaticPageServer | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  let loginToken = '';

  before(async () => {
    loginToken = await signToken({ sub: 'alice-login' });
    const routes = {
      '/probe.html': PROBE_PAGE,
      // A login page as a real site would do it: the page's own server sets an HttpOnly cookie.
      '/login': (_req: unknown, res: import('node:http').ServerResponse) => {
        res
          .writeHead(200, {
            'Content-Type': 'text/html; charset=utf-8',
            'Cache-Control': 'no-store',
            'Set-Cookie': `token=${loginToken}; Path=/; HttpOnly; SameSite=Strict`,
          })
          .end('<!doctype html><title>logged in</title>');
      },
    };
    allowed = await startStaticPageServer(routes);
    foreign = await startStaticPageServer(routes);
    broker = await startTestBroker({
      endpoints: [
        {
          path: '/chat',
          subprotocols: ['chat.v1'],
          origins: [allowed.origin],
          auth: { mode: 'required', carriers: ['cookie', 'query'], cookieName: 'token' },
        },
        {
          path: '/echo',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          origins: [allowed.origin],
        },
      ],
    });
    browser = await launchChromium();
  });

  after(async () => {
    await Promise.allSettled(contexts.map((context) => context.close()));
    await Promise.allSettled([browser?.close(), allowed?.close(), foreign?.close(), broker?.close()]);
  });

  async function newContext(): Promise<BrowserContext> {
    assert.ok(browser, 'the browser did not start');
    const context = await browser.newContext();
    contexts.push(context);
    return context;
  }

  /**
   * Loads the probe page from `server` in `context`, pointed at `ws://broker<wsPath>`, and returns
   * the events the page saw once the socket closed.
   */
  async function probe(
    context: BrowserContext,
    server: StaticPageServer | undefined,
    wsPath: string,
    protocols: readonly string[],
    send?: string,
  ): Promise<ProbeEvent[]> {
    assert.ok(server && broker, 'the page server or broker did not start');
    const query = new URLSearchParams({ ws: `${broker.url}${wsPath}` });
    for (const protocol of protocols) query.append('protocol', protocol);
    if (send !== undefined) query.set('send', send);
    const page = await context.newPage();
    try {
      await page.goto(`${server.origin}/probe.html?${query.toString()}`, { timeout: WAIT_MS });
      await page.waitForFunction('window.probe !== undefined && window.probe.done === true', undefined, {
        timeout: WAIT_MS,
      });
      return await page.evaluate<ProbeEvent[]>('window.probe.events');
    } finally {
      await page.close();
    }
  }

  /** The path as the broker logs it: every query value redacted, names kept (each attempt has its own name). */
  function logged(path: string): string {
    return path.replace(/=1$/, '=[REDACTED]');
  }

  /** The statuses the broker logged for handshakes whose request path is exactly `path`. */
  function loggedStatuses(path: string): unknown[] {
    assert.ok(broker);
    return broker
      .logLines()
      .filter((line) => line['msg'] === 'handshake' && line['path'] === logged(path))
      .map((line) => line['status']);
  }

  function loggedReason(path: string): unknown {
    assert.ok(broker);
    return broker.logLines().find((line) => line['msg'] === 'handshake' && line['path'] === logged(path))?.[
      'reason'
    ];
  }

  /** Asserts open(protocol) → the welcome for `user` → a clean 1000 close, and nothing else. */
  function assertWelcomed(events: readonly ProbeEvent[], user: string): void {
    assert.equal(events.length, 3, `events: ${JSON.stringify(events)}`);
    assert.deepEqual(events[0], { type: 'open', protocol: 'chat.v1' });
    const message = events[1];
    assert.ok(message?.type === 'message', `events: ${JSON.stringify(events)}`);
    assert.deepEqual(JSON.parse(message.data), { type: 'welcome', user });
    assert.deepEqual(events[2], { type: 'close', code: 1000, wasClean: true });
  }

  it('opens from an allowed origin with the HttpOnly cookie the page server set', async () => {
    const context = await newContext();
    const login = await context.newPage();
    await login.goto(`${allowed?.origin}/login`, { timeout: WAIT_MS });
    // The page's script cannot read the cookie: only the browser itself can have sent it.
    assert.equal(await login.evaluate<string>('document.cookie'), '');
    await login.close();

    const events = await probe(context, allowed, '/chat?attempt-login-cookie=1', ['chat.v1']);

    assertWelcomed(events, 'alice-login');
    assert.deepEqual(loggedStatuses('/chat?attempt-login-cookie=1'), [101]);
  });

  it('fires error then close 1006, never open, when the token is missing (broker: 401)', async () => {
    const context = await newContext();

    const events = await probe(context, allowed, '/chat?attempt-no-token=1', ['chat.v1']);

    assert.deepEqual(events, REFUSED);
    assert.deepEqual(loggedStatuses('/chat?attempt-no-token=1'), [401]);
    assert.equal(loggedReason('/chat?attempt-no-token=1'), 'Unauthorized');
  });

  it("checks the browser's Origin: the same page from another origin is refused (broker: 403)", async () => {
    const context = await newContext();
    // A valid cookie, so the origin is the only thing that differs between the two loads.
    await context.addCookies([
      { name: 'token', value: await signToken({ sub: 'bob-origin' }), domain: '127.0.0.1', path: '/' },
    ]);
    assert.notEqual(foreign?.origin, allowed?.origin);

    const refused = await probe(context, foreign, '/chat?attempt-foreign-origin=1', ['chat.v1']);
    const opened = await probe(context, allowed, '/chat?attempt-allowed-origin=1', ['chat.v1']);

    assert.deepEqual(refused, REFUSED);
    assert.deepEqual(loggedStatuses('/chat?attempt-foreign-origin=1'), [403]);
    assert.equal(loggedReason('/chat?attempt-foreign-origin=1'), 'Origin not allowed');
    assertWelcomed(opened, 'bob-origin');
    assert.deepEqual(loggedStatuses('/chat?attempt-allowed-origin=1'), [101]);
  });

  it('authenticates with a cookie added for the domain (not port-scoped); an expired one gets 401', async () => {
    const good = await newContext();
    await good.addCookies([
      { name: 'token', value: await signToken({ sub: 'carol-cookie' }), domain: '127.0.0.1', path: '/' },
    ]);
    const expired = await newContext();
    const expiredToken = await signToken({
      sub: 'carol-cookie',
      expiresIn: Math.floor(Date.now() / 1000) - 3600,
    });
    await expired.addCookies([{ name: 'token', value: expiredToken, domain: '127.0.0.1', path: '/' }]);

    const opened = await probe(good, allowed, '/chat?attempt-added-cookie=1', ['chat.v1']);
    const refused = await probe(expired, allowed, '/chat?attempt-expired-cookie=1', ['chat.v1']);

    assertWelcomed(opened, 'carol-cookie');
    assert.deepEqual(loggedStatuses('/chat?attempt-added-cookie=1'), [101]);
    assert.deepEqual(refused, REFUSED);
    assert.deepEqual(loggedStatuses('/chat?attempt-expired-cookie=1'), [401]);
    assert.equal(loggedReason('/chat?attempt-expired-cookie=1'), 'Unauthorized');
  });

  it('fails the connection when it offered a subprotocol and the 101 names none, though the broker accepted', async () => {
    const context = await newContext();

    // Control: no offer, the default module answers, and ws.protocol is the empty string.
    const plain = await probe(context, allowed, '/echo?attempt-no-offer', [], 'whoami');
    // An offer the endpoint does not speak: echo.v1 ('omit') accepts without Sec-WebSocket-Protocol.
    const offered = await probe(context, allowed, '/echo?attempt-unknown-offer', ['other.v1']);

    assert.equal(plain.length, 3, `events: ${JSON.stringify(plain)}`);
    assert.deepEqual(plain[0], { type: 'open', protocol: '' });
    const whoami = plain[1];
    assert.ok(whoami?.type === 'message', `events: ${JSON.stringify(plain)}`);
    assert.deepEqual(
      { ...(JSON.parse(whoami.data) as Record<string, unknown>), id: 'ignored' },
      { id: 'ignored', endpoint: '/echo', protocol: null, params: {}, principal: null },
    );
    assert.deepEqual(loggedStatuses('/echo?attempt-no-offer'), [101]);

    assert.deepEqual(offered, REFUSED);
    assert.deepEqual(loggedStatuses('/echo?attempt-unknown-offer'), [101]);
  });
});
