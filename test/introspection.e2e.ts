import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { nextMessage, opened } from './support/ws-helpers.js';

const CLIENT = { id: 'broker', secret: 'introspection client secret' };

/**
 * An RFC 7662 introspection endpoint on loopback: it checks the broker's client credentials, answers
 * for the tokens the test issued, counts what it is asked, and can be taken down (connections reset).
 */
class IntrospectionServer {
  readonly active = new Map<string, Record<string, unknown>>();
  asked = 0;
  down = false;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<IntrospectionServer> {
    let self: IntrospectionServer | null = null;
    const server = createServer((req, res) => self?.answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    self = new IntrospectionServer(server);
    return self;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/introspect`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    if (this.down) {
      req.socket.destroy();
      return;
    }
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      this.asked++;
      const basic = Buffer.from(`${CLIENT.id}:${encodeURIComponent(CLIENT.secret).replace(/%20/g, '+')}`);
      if (req.method !== 'POST' || req.headers.authorization !== `Basic ${basic.toString('base64')}`) {
        res.writeHead(401).end();
        return;
      }
      const form = new URLSearchParams(body);
      const claims = this.active.get(form.get('token') ?? '');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(claims === undefined ? { active: false } : { active: true, ...claims }));
    });
  }
}

describe('opaque tokens by token introspection (RFC 7662)', () => {
  let provider: IntrospectionServer;
  let broker: TestBroker;

  before(async () => {
    provider = await IntrospectionServer.start();
    broker = await startTestBroker({
      endpoints: [
        { path: '/secure', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', auth: { mode: 'required' } },
      ],
      jwt: { secret: 'test-secret-that-is-at-least-32-characters-long' },
      introspection: {
        url: provider.url,
        clientId: CLIENT.id,
        clientSecret: CLIENT.secret,
        cacheSec: 60,
        negativeCacheSec: 1,
        audience: 'broker',
      },
    });
  });
  after(async () => {
    await broker?.close();
    await provider?.close();
  });

  function upgrade(token: string) {
    return rawExchange(
      broker.port,
      upgradeRequest(`/secure?token=${encodeURIComponent(token)}`, { 'Sec-WebSocket-Protocol': 'echo.v1' }),
    );
  }

  it('an active token opens the endpoint with its sub, scopes and claims, and is asked once while cached', async () => {
    const exp = Math.floor(Date.now() / 1000) + 300;
    provider.active.set('opaque-alice', { sub: 'alice', scope: 'endpoint:/secure', aud: ['broker'], exp });
    const asked = provider.asked;
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`${broker.url}/secure?token=opaque-alice`, 'echo.v1');
      await opened(ws);
      ws.send('whoami');
      const { principal } = JSON.parse(await nextMessage(ws)) as { principal: { subject: string } };
      assert.equal(principal.subject, 'alice');
      ws.close();
    }
    assert.equal(provider.asked, asked + 1, 'the answer is cached');
  });

  it('inactive, for another audience, without sub or expired: 401 with the reason, inactive ones cached briefly', async () => {
    const now = Math.floor(Date.now() / 1000);
    provider.active.set('opaque-other-aud', { sub: 'bob', aud: 'someone-else', exp: now + 300 });
    provider.active.set('opaque-no-sub', { aud: 'broker', exp: now + 300 });
    provider.active.set('opaque-expired', { sub: 'carol', aud: 'broker', exp: now - 10 });
    const cases = [
      ['opaque-unknown', /the token is not active/],
      ['opaque-other-aud', /aud\W+ claim is not accepted/],
      ['opaque-no-sub', /no \W+sub\W+ claim/],
      ['opaque-expired', /the token has expired/],
    ] as const;
    for (const [token, reason] of cases) {
      const response = await upgrade(token);
      assert.equal(response.status, 401, token);
      assert.match(response.body, reason);
    }
    const asked = provider.asked;
    assert.equal((await upgrade('opaque-unknown')).status, 401);
    assert.equal(provider.asked, asked, 'an inactive answer is kept for negativeCacheSec');
  });

  it('a JWT still goes to the JWT verifier, not to the introspection endpoint', async () => {
    const asked = provider.asked;
    const ws = new WebSocket(`${broker.url}/secure?token=${await signToken({ sub: 'dave' })}`, 'echo.v1');
    await opened(ws);
    ws.close();
    assert.equal(provider.asked, asked);
  });

  it('the endpoint down: a cached active token still opens, an unknown one gets 503 with Retry-After', async () => {
    provider.down = true;
    try {
      const ws = new WebSocket(`${broker.url}/secure?token=opaque-alice`, 'echo.v1');
      await opened(ws);
      ws.close();
      const response = await upgrade('opaque-never-seen');
      assert.equal(response.status, 503);
      assert.ok(response.headers['retry-after'] !== undefined);
      assert.match(response.body, /introspection endpoint did not answer/);
      assert.doesNotMatch(broker.logText(), /introspection client secret/, 'the secret is never logged');
      // Ready all the same (cached answers still open), with the detail saying why the others do not.
      const down = await readiness();
      assert.equal(down.status, 200);
      assert.ok(down.detail.cached >= 1, 'the cached answers are counted');
      assert.notEqual(down.detail.lastError, null, 'the failure is named');
    } finally {
      provider.down = false;
    }
    assert.equal((await upgrade('opaque-after-the-outage')).status, 401, 'the endpoint answers again');
    assert.equal((await readiness()).detail.lastError, null, 'an answer clears the error');
  });

  async function readiness() {
    const response = await fetch(`http://127.0.0.1:${broker.port}/health/ready`);
    const body = (await response.json()) as {
      details: {
        introspection: { cached: number; lastAnswerAgeSec: number | null; lastError: string | null };
      };
    };
    return { status: response.status, detail: body.details.introspection };
  }
});
