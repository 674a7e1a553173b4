import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect as http2Connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { ConnectionRegistry } from '#broker/gateway';
import { MqttModule } from '#broker/protocols/mqtt';
import { connectAsync, type ErrorWithReasonCode } from 'mqtt';
import WebSocket from 'ws';
import { http2WebSocket } from './support/http2-websocket.js';
import { MQTT_ENDPOINT } from './support/mqtt-helpers.js';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { SessionApp, SessionGuardsModule } from './support/session-guard-app.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, nextMessage, opened, waitFor } from './support/ws-helpers.js';

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
        http: { http2: true },
        mqtt: { sysIntervalSec: 0 },
        endpoints: [
          echo('/app'),
          echo('/slow', { mode: 'none', guardTimeoutMs: 300 }),
          echo('/broken'),
          echo('/open', { mode: 'required' }),
          echo('/later', { mode: 'required', carriers: ['first-message'] }),
          { ...MQTT_ENDPOINT, auth: { mode: 'required', carriers: ['query', 'first-message'] } },
          { ...MQTT_ENDPOINT, path: '/mqtt-open', auth: { mode: 'none' } },
        ],
      },
      [SessionGuardsModule.withPrefix(prefix), MqttModule],
    );
    h2 = http2Connect(`http://127.0.0.1:${broker.port}`);
    h2.on('error', () => undefined);
    await once(h2, 'remoteSettings');
  });
  after(async () => {
    h2?.close();
    await broker?.close();
    await app?.close();
  });
  let h2: ClientHttp2Session;

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

  /** The answer to an extended CONNECT (RFC 8441) of `path` over the HTTP/2 session; the stream is ended. */
  async function upgradeOverHttp2(path: string, headers: Record<string, string> = {}) {
    const stream = h2.request(
      {
        ':method': 'CONNECT',
        ':protocol': 'websocket',
        ':path': path,
        'sec-websocket-version': '13',
        'sec-websocket-protocol': 'echo.v1',
        ...headers,
      },
      { endStream: false },
    );
    const [response] = (await once(stream, 'response')) as [IncomingHttpHeaders];
    const status = Number(response[':status']);
    let body = '';
    if (status !== 200) for await (const chunk of stream) body += String(chunk);
    stream.close();
    return { status, headers: response, body };
  }

  it('over HTTP/2 the guards run in the same order with the same answers as over HTTP/1.1', async () => {
    const cookie = await app.login('erin', 'acme');
    const ws = http2WebSocket(h2, `ws://127.0.0.1:${broker.port}/app`, 'echo.v1', { headers: { cookie } });
    await opened(ws);
    ws.send('whoami');
    const { principal } = JSON.parse(await nextMessage(ws)) as { principal: { subject: string } };
    assert.equal(principal.subject, 'erin');
    ws.close();
    const cases: [Record<string, string>, number, RegExp][] = [
      [{}, 401, /no session: log in first/],
      [{ cookie: await app.login('frank', 'closed') }, 403, /your tenant is closed/],
      [{ cookie: await app.login('greedy') }, 429, /too many devices for this user/],
      [{ cookie: await app.login('nobody') }, 403, /refused/],
    ];
    for (const [headers, status, reason] of cases) {
      const one = await upgrade('/app', headers);
      const two = await upgradeOverHttp2('/app', headers);
      assert.equal(one.status, status, JSON.stringify(headers));
      assert.equal(two.status, status, `over HTTP/2: ${JSON.stringify(headers)}`);
      assert.match(two.body, reason);
      for (const name of ['www-authenticate', 'retry-after'])
        assert.equal(two.headers[name], one.headers[name], `${name} over HTTP/2 as over HTTP/1.1`);
    }
    assert.equal((await upgradeOverHttp2('/slow')).status, 503);
    assert.equal((await upgradeOverHttp2('/broken')).status, 500);
  });

  it("a credential in MQTT's CONNECT goes through the guards: a closed tenant is refused 0x87, a held-back user 0x88", async () => {
    const connectWith = async (password: string, query = '', path = '/mqtt') => {
      try {
        const client = await connectAsync(`${broker.url}${path}${query}`, {
          protocolVersion: 5,
          username: 'device',
          password,
          reconnectPeriod: 0,
          connectTimeout: 3000,
        });
        await client.endAsync();
        return 0;
      } catch (err) {
        return (err as ErrorWithReasonCode).code;
      }
    };
    const token = (sub: string, tenant: string) => signToken({ sub, claims: { tenant } });
    assert.equal(await connectWith(await token('gina', 'acme')), 0, 'an open tenant connects');
    assert.equal(await connectWith(await token('hank', 'closed')), 0x87, 'a closed tenant: not authorized');
    assert.equal(await connectWith(await token('greedy', 'acme')), 0x88, 'held back: server unavailable');
    // A principal from the handshake does not shield the credential the CONNECT brings instead.
    const acme = `?token=${await token('ivan', 'acme')}`;
    assert.equal(
      await connectWith(await token('ivan', 'closed'), acme),
      0x87,
      'the CONNECT credential is guarded',
    );
    // On an endpoint that asks for no credential, one that CONNECT brings still names someone: guarded too.
    const open = await connectWith(await token('kate', 'closed'), '', '/mqtt-open');
    assert.equal(open, 0x87, 'a closed tenant on an auth-none endpoint');
  });

  it("the generic auth message's token goes through the guards: a closed tenant is closed 1008 with the guard's reason", async () => {
    const token = (tenant: string) => signToken({ sub: 'judy', claims: { tenant } });
    const open = new WebSocket(`${broker.url}/later`, 'echo.v1');
    await opened(open);
    open.send(JSON.stringify({ type: 'auth', token: await token('acme') }));
    open.send('whoami');
    const { principal } = JSON.parse(await nextMessage(open)) as { principal: { subject: string } };
    assert.equal(principal.subject, 'judy');
    open.close();
    const shut = new WebSocket(`${broker.url}/later`, 'echo.v1');
    await opened(shut);
    shut.send(JSON.stringify({ type: 'auth', token: await token('closed') }));
    const { code, reason } = await closed(shut);
    assert.equal(code, 1008);
    assert.match(reason, /your tenant is closed/);
  });

  it('an endpoint no guard names is not guarded: its token decides alone', async () => {
    const ws = new WebSocket(`${broker.url}/open?token=${await signToken({ sub: 'dave' })}`, 'echo.v1');
    await opened(ws);
    ws.close();
  });
});
