import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ConnectionRegistry } from '#broker/gateway';
import WebSocket from 'ws';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { SessionApp, SessionGuardsModule } from './support/session-guard-app.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { nextMessage, opened, waitFor } from './support/ws-helpers.js';

const echo = (path: string, auth: Record<string, unknown> = { mode: 'none' }) => ({
  path,
  subprotocols: ['echo.v1'],
  defaultModule: 'echo.v1',
  auth,
});

describe('handshake guards: application providers with injected services', () => {
  let app: SessionApp;
  let broker: TestBroker;

  before(async () => {
    const prefix = `broker-guards-${randomBytes(4).toString('hex')}:`;
    app = await SessionApp.start(prefix);
    broker = await startTestBroker(
      {
        endpoints: [
          echo('/app'),
          echo('/slow', { mode: 'none', guardTimeoutMs: 300 }),
          echo('/broken'),
          echo('/open', { mode: 'required' }),
        ],
      },
      [SessionGuardsModule.withPrefix(prefix)],
    );
  });
  after(async () => {
    await broker?.close();
    await app?.close();
  });

  /** The raw answer to an upgrade of `path` with these extra headers. */
  function upgrade(path: string, headers: Record<string, string> = {}) {
    return rawExchange(
      broker.port,
      upgradeRequest(path, { 'Sec-WebSocket-Protocol': 'echo.v1', ...headers }),
    );
  }

  it("authenticates from the application's express-session cookie in Redis: the principal reaches the module", async () => {
    const cookie = await app.login('alice', 'acme');
    const ws = new WebSocket(`${broker.url}/app`, 'echo.v1', { headers: { cookie } });
    await opened(ws);
    ws.send('whoami');
    const { principal } = JSON.parse(await nextMessage(ws)) as {
      principal: { subject: string; claims: Record<string, unknown>; carrier: string };
    };
    assert.deepEqual(principal, { subject: 'alice', claims: { tenant: 'acme' }, carrier: 'guard' });
    ws.close();
  });

  it('refuses without a session, with a forged cookie and after logout: 401 with a challenge and the reason', async () => {
    const cookie = await app.login('bob');
    const forged = cookie.replace(/\.[^.]+$/, '.forgedsignature');
    await app.logout(cookie);
    for (const headers of [{}, { cookie: forged }, { cookie }] as Record<string, string>[]) {
      const response = await upgrade('/app', headers);
      assert.equal(response.status, 401, JSON.stringify(headers));
      assert.equal(response.headers['www-authenticate'], 'Bearer realm="/app"');
      assert.match(response.body, /no session: log in first/);
    }
  });

  it('a later guard sees the principal the first one set: 403 for a closed tenant, 429 with its own Retry-After', async () => {
    const closed = await upgrade('/app', { cookie: await app.login('carol', 'closed') });
    assert.equal(closed.status, 403);
    assert.match(closed.body, /your tenant is closed/);
    const greedy = await upgrade('/app', { cookie: await app.login('greedy') });
    assert.equal(greedy.status, 429);
    assert.equal(greedy.headers['retry-after'], '30');
    assert.match(greedy.body, /too many devices for this user/);
    const nobody = await upgrade('/app', { cookie: await app.login('nobody') });
    assert.equal(nobody.status, 403, 'a guard returning false');
  });

  it("a guard past the endpoint's guardTimeoutMs is a 503, one that throws a 500 that is logged, never a 101", async () => {
    const slow = await upgrade('/slow');
    assert.equal(slow.status, 503);
    assert.ok(slow.headers['retry-after'] !== undefined);
    const broken = await upgrade('/broken');
    assert.equal(broken.status, 500);
    assert.doesNotMatch(broken.body, /Cannot read properties/, 'the error stays in the log');
    assert.ok(broker.logLines().some((line) => line['msg'] === 'handshake guard threw'));
    const registry = broker.app.get(ConnectionRegistry);
    await waitFor(() => registry.open() === 0);
  });

  it('an endpoint no guard names is not guarded: its token decides alone', async () => {
    const ws = new WebSocket(`${broker.url}/open?token=${await signToken({ sub: 'dave' })}`, 'echo.v1');
    await opened(ws);
    ws.close();
  });
});
