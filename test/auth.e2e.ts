import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, nextMessage, opened, refusedStatus, waitFor } from './support/ws-helpers.js';

interface WhoAmI {
  principal: { subject: string; carrier: string } | null;
}

describe('authentication carriers, end to end', () => {
  let broker: TestBroker;
  let token: string;

  before(async () => {
    broker = await startTestBroker({
      endpoints: [
        { path: '/secure', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', auth: { mode: 'required' } },
        { path: '/header-bin', subprotocols: ['bin.v1'], auth: { mode: 'required', carriers: ['header'] } },
        {
          path: '/header-only',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'required', carriers: ['header'] },
        },
        {
          path: '/optional',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'optional' },
        },
        {
          path: '/first',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: {
            mode: 'required',
            carriers: ['first-message'],
            firstMessageTimeoutMs: 300,
            firstMessageMaxQueued: 2,
          },
        },
      ],
    });
    token = await signToken({ sub: 'alice' });
  });
  after(() => broker.close());

  async function whoami(ws: WebSocket): Promise<WhoAmI> {
    ws.send('whoami');
    return JSON.parse(await nextMessage(ws)) as WhoAmI;
  }

  it('a connection does not outlive its credential: at exp it is closed 1008', async () => {
    const token = await signToken({ sub: 'brief', expiresIn: '2s' });
    const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
    await opened(ws);
    assert.deepEqual(await closed(ws, 8000), { code: 1008, reason: 'credential expired' });
  });

  it('query parameter', async () => {
    const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
    await opened(ws);
    assert.deepEqual((await whoami(ws)).principal?.subject, 'alice');
    ws.close();
  });

  it('cookie', async () => {
    const ws = new WebSocket(`${broker.url}/secure`, 'echo.v1', {
      headers: { Cookie: `theme=dark; token=${token}` },
    });
    await opened(ws);
    assert.equal((await whoami(ws)).principal?.carrier, 'cookie');
    ws.close();
  });

  it('Authorization: Bearer', async () => {
    const ws = new WebSocket(`${broker.url}/header-only`, 'echo.v1', {
      headers: { Authorization: `Bearer ${token}` },
    });
    await opened(ws);
    assert.equal((await whoami(ws)).principal?.carrier, 'header');
    ws.close();
  });

  it('a Sec-WebSocket-Protocol item: never selected, never echoed', async () => {
    const ws = new WebSocket(`${broker.url}/secure`, [`bearer.${token}`, 'echo.v1']);
    await opened(ws);
    assert.equal(ws.protocol, 'echo.v1');
    assert.equal((await whoami(ws)).principal?.carrier, 'subprotocol');
    ws.close();
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/secure', { 'Sec-WebSocket-Protocol': `bearer.${token}` }),
      300,
    );
    assert.equal(res.status, 101);
    assert.equal(res.headers['sec-websocket-protocol'], undefined);
    assert.doesNotMatch(res.raw, new RegExp(token.slice(-20)));
  });

  it('missing, malformed, badly signed, expired or not-yet-valid credentials -> 401 with WWW-Authenticate', async () => {
    const forged = await signToken({ secret: 'another-secret-that-is-32-characters-long!!' });
    const expired = await signToken({ expiresIn: Math.floor(Date.now() / 1000) - 3600 });
    const early = await signToken({ notBefore: Math.floor(Date.now() / 1000) + 3600 });
    const noSubject = await signToken({ sub: '' });
    const cases: [string, Record<string, string>][] = [
      ['/header-only', {}],
      ['/header-only', { Authorization: 'Basic YWxpY2U6c2VjcmV0' }],
      ['/header-only', { Authorization: 'Bearer not.a.jwt' }],
      ['/header-only', { Authorization: `Bearer ${forged}` }],
      ['/header-only', { Authorization: `Bearer ${expired}` }],
      ['/header-only', { Authorization: `Bearer ${early}` }],
      ['/header-only', { Authorization: `Bearer ${noSubject}` }],
    ];
    for (const [path, headers] of cases) {
      const res = await rawExchange(broker.port, upgradeRequest(path, headers));
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.match(res.headers['www-authenticate'] ?? '', /^Bearer realm=/);
    }
    const detail = async (auth: string) =>
      (
        JSON.parse(
          (await rawExchange(broker.port, upgradeRequest('/header-only', { Authorization: auth }))).body,
        ) as {
          detail: string;
        }
      ).detail;
    assert.match(await detail(`Bearer ${expired}`), /expired/);
    assert.match(await detail(`Bearer ${early}`), /not yet valid/);
    assert.match(await detail(`Bearer ${forged}`), /signature/);
  });

  it('a missing credential is 401 before subprotocol selection where it cannot come later', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/header-bin', { 'Sec-WebSocket-Protocol': 'nope' }),
    );
    assert.equal(res.status, 401);
  });

  it('a token without exp is refused: a credential must expire', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/header-only', { Authorization: `Bearer ${await signToken({ expiresIn: null })}` }),
    );
    assert.equal(res.status, 401);
    assert.match(res.body, /exp/);
  });

  it('a bad credential is never ignored where auth is optional; none is anonymous', async () => {
    assert.equal(await refusedStatus(new WebSocket(`${broker.url}/optional?token=garbage`)), 401);
    const ws = new WebSocket(`${broker.url}/optional`);
    await opened(ws);
    assert.equal((await whoami(ws)).principal, null);
    ws.close();
  });

  it('first message: held until {"type":"auth"} verifies, then what was held reaches the module in order', async () => {
    const ws = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(ws);
    const received: string[] = [];
    ws.on('message', (data: Buffer) => received.push(data.toString()));
    ws.send('early');
    ws.send(JSON.stringify({ type: 'auth', token }));
    ws.send('whoami');
    await waitFor(() => received.length === 2);
    assert.equal(received[0], 'early');
    assert.equal((JSON.parse(received[1] as string) as WhoAmI).principal?.carrier, 'first-message');
    ws.close();
  });

  it('first message: a bad token closes 4401', async () => {
    const ws = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(ws);
    ws.send(JSON.stringify({ type: 'auth', token: 'nope' }));
    const { code, reason } = await closed(ws);
    assert.equal(code, 4401);
    assert.match(reason, /authentication failed/);
  });

  it('first message: an auth message without a string token closes 4401', async () => {
    const ws = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(ws);
    ws.send(JSON.stringify({ type: 'auth', token: 42 }));
    assert.equal((await closed(ws)).code, 4401);
  });

  it('first message: no auth within the timeout closes 4408', async () => {
    const ws = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(ws);
    assert.equal((await closed(ws)).code, 4408);
  });

  it('first message: what arrives before auth is bounded (1008 past it), other clients untouched', async () => {
    const other = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
    await opened(other);
    const ws = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(ws);
    for (const n of [1, 2, 3]) ws.send(`message ${n}`);
    const { code, reason } = await closed(ws);
    assert.equal(code, 1008);
    assert.match(reason, /before authentication/);
    const big = new WebSocket(`${broker.url}/first`, 'echo.v1');
    await opened(big);
    big.send('x'.repeat(9000));
    assert.equal((await closed(big)).code, 1008);
    other.send('ping?');
    assert.equal(await nextMessage(other), 'ping?');
    other.close();
  });

  it('tokens in malformed or unexpected places never reach a log line either', async () => {
    const secret = await signToken({ sub: 'leaky' });
    await rawExchange(
      broker.port,
      upgradeRequest('/secure', { 'Sec-WebSocket-Protocol': `echo.v1 bearer.${secret}` }),
    );
    await rawExchange(
      broker.port,
      upgradeRequest('/secure', { 'Sec-WebSocket-Protocol': `echo.v1, Bearer.${secret}` }),
      300,
    );
    await rawExchange(broker.port, upgradeRequest(`/secure?${secret}`), 300);
    await rawExchange(
      broker.port,
      upgradeRequest('/secure', { 'Sec-WebSocket-Protocol': `echo.v1, ${secret}` }),
      300,
    );
    await waitFor(
      () =>
        broker
          .logText()
          .split('\n')
          .filter((l) => l.includes('"handshake"')).length > 0,
    );
    assert.ok(!broker.logText().includes(secret.split('.')[2] as string), 'no signature in the logs');
    assert.ok(!broker.logText().includes(secret.split('.')[1] as string), 'no claims in the logs');
  });

  it('tokens never reach a log line (query, cookie, Authorization, subprotocol item, first message)', () => {
    const logs = broker.logText();
    assert.ok(logs.includes('"status":101'), 'handshakes were logged');
    assert.ok(!logs.includes(token), 'the token is not in the logs');
    assert.ok(!logs.includes(token.split('.')[2] as string), 'not even its signature');
    assert.match(logs, /"path":"\/secure\?token=\[REDACTED\]"/);
    assert.match(logs, /"offered":"bearer\.\[REDACTED\], echo\.v1"/);
  });
});
