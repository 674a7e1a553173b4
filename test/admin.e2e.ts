import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import request from 'supertest';
import WebSocket from 'ws';
import { badFields, problem } from './support/problems.js';
import { rawExchange } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { closed, opened, refusedStatus } from './support/ws-helpers.js';

const ADMIN = 'admin-token-for-tests-0123456789';

function http(broker: TestBroker): string {
  return broker.url.replace(/^ws/, 'http');
}

describe('admin API', () => {
  let broker: TestBroker;
  let api: ReturnType<typeof request>;
  const auth = { Authorization: `Bearer ${ADMIN}` };

  before(async () => {
    broker = await startTestBroker({
      admin: { tokens: [ADMIN] },
      endpoints: [
        {
          path: '/chat',
          subprotocols: ['chat.v1'],
          defaultModule: 'chat.v1',
          origins: ['https://static.example'],
        },
        {
          path: '/secure',
          subprotocols: ['echo.v1'],
          defaultModule: 'echo.v1',
          auth: { mode: 'required', carriers: ['query', 'header'] },
        },
        { path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' },
        { path: '/rooms/:room', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' },
      ],
    });
    api = request(http(broker));
  });
  after(() => broker.close());

  describe('authentication', () => {
    it('401 with WWW-Authenticate without a bearer token or with an unknown one', async () => {
      const missing = await api.get('/admin/v1/endpoints');
      problem(missing, 401);
      assert.match(missing.headers['www-authenticate'] ?? '', /^Bearer/);
      problem(await api.get('/admin/v1/endpoints').set('Authorization', 'Bearer not-a-token'), 401);
      problem(await api.get('/admin/v1/endpoints').set('Authorization', `Basic ${ADMIN}`), 401);
    });

    it('403 for a valid credential without the admin scope; 200 with it (JWT or stored token)', async () => {
      const plain = await signToken({ sub: 'carol' });
      problem(await api.get('/admin/v1/endpoints').set('Authorization', `Bearer ${plain}`), 403);
      const scoped = await signToken({ sub: 'dave', claims: { scope: 'admin' } });
      assert.equal(
        (await api.get('/admin/v1/endpoints').set('Authorization', `Bearer ${scoped}`)).status,
        200,
      );

      const created = await api
        .post('/admin/v1/credentials/tokens')
        .set(auth)
        .send({ name: 'ops', scopes: ['admin'] });
      assert.equal(created.status, 201);
      const stored = created.body.token as string;
      const listed = await api.get('/admin/v1/credentials').set('Authorization', `Bearer ${stored}`);
      assert.equal(listed.status, 200);
      await api
        .delete(`/admin/v1/credentials/${created.body.id as string}`)
        .set(auth)
        .expect(200);
      problem(await api.get('/admin/v1/endpoints').set('Authorization', `Bearer ${stored}`), 401);
    });
  });

  describe('endpoints', () => {
    it('lists the configured endpoints with policies and live connection counts', async () => {
      const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1');
      await opened(ws);
      const res = await api.get('/admin/v1/endpoints').set(auth).expect(200);
      const echo = (
        res.body as { path: string; connections: { open: number }; subprotocols: unknown[] }[]
      ).find((e) => e.path === '/echo');
      assert.deepEqual(echo?.subprotocols, [{ name: 'echo.v1', onUnsupported: 'omit' }]);
      assert.equal(echo?.connections.open, 1);
      ws.close();
      await closed(ws);
    });
  });

  describe('origins', () => {
    it('an added origin lets its handshake through; removing it brings back 403', async () => {
      const origin = 'https://app.example.com';
      const attempt = () => new WebSocket(`${broker.url}/chat`, 'chat.v1', { origin });
      assert.equal(await refusedStatus(attempt()), 403);

      const added = await api
        .post('/admin/v1/origins')
        .set(auth)
        .send({ origin, endpoint: '/chat' })
        .expect(201);
      const ws = attempt();
      await opened(ws);
      ws.close();
      // The configured entry still works next to the run-time one.
      const configured = new WebSocket(`${broker.url}/chat`, 'chat.v1', { origin: 'https://static.example' });
      await opened(configured);
      configured.close();

      await api
        .delete(`/admin/v1/origins/${added.body.id as string}`)
        .set(auth)
        .expect(200);
      assert.equal(await refusedStatus(attempt()), 403);
    });

    it('a global entry applies to every endpoint, replacing the same-origin default', async () => {
      const origin = 'https://global.example';
      assert.equal(await refusedStatus(new WebSocket(`${broker.url}/echo`, 'echo.v1', { origin })), 403);
      const added = await api.post('/admin/v1/origins').set(auth).send({ origin }).expect(201);
      assert.equal(added.body.endpoint, null);
      const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1', { origin });
      await opened(ws);
      ws.close();
      const listed = await api.get('/admin/v1/origins?endpoint=global').set(auth).expect(200);
      assert.deepEqual(
        (listed.body as { origin: string }[]).map((e) => e.origin),
        [origin],
      );
      await api
        .delete(`/admin/v1/origins/${added.body.id as string}`)
        .set(auth)
        .expect(200);
    });

    it('refuses malformed origins, unknown endpoints and unknown fields with 400 naming each field', async () => {
      for (const origin of [
        'https://app.example.com/',
        'https://app.example.com/path',
        '*',
        'app.example.com',
        'https://app.example.com:99999',
        42,
        '',
      ]) {
        assert.deepEqual(
          badFields(await api.post('/admin/v1/origins').set(auth).send({ origin })),
          ['origin'],
          String(origin),
        );
      }
      assert.deepEqual(
        badFields(
          await api.post('/admin/v1/origins').set(auth).send({ origin: 'null', endpoint: '/nowhere' }),
        ),
        ['endpoint'],
      );
      const both = badFields(
        await api.post('/admin/v1/origins').set(auth).send({ origin: 'x', colour: 'red' }),
      );
      assert.deepEqual(both.sort(), ['colour', 'origin']);
    });

    it('accepts the null origin and subdomain patterns; a duplicate is 409, an unknown id 404', async () => {
      const wildcard = await api
        .post('/admin/v1/origins')
        .set(auth)
        .send({ origin: 'https://*.example.net' })
        .expect(201);
      problem(await api.post('/admin/v1/origins').set(auth).send({ origin: 'https://*.example.net' }), 409);
      const nullOrigin = await api
        .post('/admin/v1/origins')
        .set(auth)
        .send({ origin: 'null', endpoint: null })
        .expect(201);
      problem(await api.delete('/admin/v1/origins/does-not-exist').set(auth), 404);
      await api
        .delete(`/admin/v1/origins/${wildcard.body.id as string}`)
        .set(auth)
        .expect(200);
      await api
        .delete(`/admin/v1/origins/${nullOrigin.body.id as string}`)
        .set(auth)
        .expect(200);
    });
  });

  describe('credentials', () => {
    it('a created token opens an endpoint; once revoked the next handshake gets 401', async () => {
      const created = await api
        .post('/admin/v1/credentials/tokens')
        .set(auth)
        .send({ name: 'svc' })
        .expect(201);
      const token = created.body.token as string;
      assert.match(token, /^wsb_/);
      const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
      await opened(ws);

      const listed = await api.get('/admin/v1/credentials').set(auth).expect(200);
      assert.ok(!JSON.stringify(listed.body).includes(token), 'the token is listed again');
      await api
        .delete(`/admin/v1/credentials/${created.body.id as string}`)
        .set(auth)
        .expect(200);
      assert.equal(await refusedStatus(new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1')), 401);
      // The connection opened before the revocation is not cut: revocation is checked at the handshake.
      assert.equal(ws.readyState, WebSocket.OPEN);
      ws.close();
      problem(await api.delete('/admin/v1/credentials/nope').set(auth), 404);
    });

    it('a stored token past its expiresAt gets 401 at the next handshake', async () => {
      const expiresAt = new Date(Date.now() + 1500).toISOString();
      const created = await api
        .post('/admin/v1/credentials/tokens')
        .set(auth)
        .send({ name: 'brief', expiresAt })
        .expect(201);
      const token = created.body.token as string;
      const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
      await opened(ws);
      ws.close();
      await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 100));
      assert.equal(await refusedStatus(new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1')), 401);
    });

    it('a token scoped to one endpoint gets 403 on another', async () => {
      const created = await api
        .post('/admin/v1/credentials/tokens')
        .set(auth)
        .send({ name: 'chat-only', scopes: ['endpoint:/chat'] })
        .expect(201);
      const status = await refusedStatus(
        new WebSocket(`${broker.url}/secure`, 'echo.v1', {
          headers: { Authorization: `Bearer ${created.body.token as string}` },
        }),
      );
      assert.equal(status, 403);
    });

    it('creates password credentials without ever returning the password; a second active username is 409', async () => {
      const body = {
        name: 'device',
        username: 'dev-7',
        password: 'correct horse battery',
        scopes: ['mqtt:publish:a/#'],
      };
      const created = await api.post('/admin/v1/credentials/passwords').set(auth).send(body).expect(201);
      assert.equal(created.body.status, 'active');
      assert.ok(!JSON.stringify(created.body).includes(body.password));
      problem(await api.post('/admin/v1/credentials/passwords').set(auth).send(body), 409);
    });

    it('refuses bad credential bodies naming each field', async () => {
      const fields = badFields(
        await api
          .post('/admin/v1/credentials/passwords')
          .set(auth)
          .send({
            name: '',
            username: 'x',
            password: 'short',
            scopes: ['has space'],
            expiresAt: '2001-01-01T00:00:00Z',
          }),
      );
      assert.deepEqual(fields.sort(), ['expiresAt', 'name', 'password', 'scopes']);
      assert.deepEqual(
        badFields(
          await api.post('/admin/v1/credentials/tokens').set(auth).send({ name: 'a', scopes: 'admin' }),
        ),
        ['scopes'],
      );
      assert.deepEqual(
        badFields(
          await api.post('/admin/v1/credentials/tokens').set(auth).send({ name: 'a', expiresAt: 'tomorrow' }),
        ),
        ['expiresAt'],
      );
    });
  });

  describe('connections', () => {
    it('filters by an endpoint pattern as configured, or by a path a client connects to', async () => {
      const a = new WebSocket(`${broker.url}/rooms/a`, 'echo.v1');
      const b = new WebSocket(`${broker.url}/rooms/b`, 'echo.v1');
      await Promise.all([opened(a), opened(b)]);
      const count = async (endpoint: string) =>
        (
          (
            await api
              .get(`/admin/v1/connections?endpoint=${encodeURIComponent(endpoint)}`)
              .set(auth)
              .expect(200)
          ).body as unknown[]
        ).length;
      assert.equal(await count('/rooms/:room'), 2);
      assert.equal(await count('/rooms/a'), 1);
      assert.equal(await count('/rooms/c'), 0);
      assert.equal(await count('/rooms/%E0%A4%A'), 0, 'a path that does not decode names nothing');
      a.close();
      b.close();
    });

    it('lists open connections with filters and closes one with the given code and reason', async () => {
      const token = await signToken({ sub: 'erin' });
      const before = Date.now();
      const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
      await opened(ws);
      ws.send('hello');
      await new Promise((resolve) => ws.once('message', resolve));
      const listed = await api.get('/admin/v1/connections?principal=erin').set(auth).expect(200);
      const [mine] = listed.body as {
        id: string;
        endpoint: string;
        subprotocol: string;
        bytesIn: number;
        bytesOut: number;
        openedAt: string;
      }[];
      assert.equal(listed.body.length, 1);
      const openedAt = Date.parse(mine?.openedAt ?? '');
      assert.ok(
        openedAt >= before && openedAt <= Date.now(),
        `openedAt ${mine?.openedAt} is the time of the upgrade`,
      );
      assert.equal(new Date(openedAt).toISOString(), mine?.openedAt);
      assert.deepEqual([mine?.endpoint, mine?.subprotocol, mine?.bytesIn], ['/secure', 'echo.v1', 5]);
      assert.ok((mine?.bytesOut ?? 0) >= 5);
      assert.deepEqual(
        (await api.get('/admin/v1/connections?principal=nobody').set(auth).expect(200)).body,
        [],
      );

      problem(await api.delete(`/admin/v1/connections/${mine?.id ?? ''}?code=1005`).set(auth), 400);
      problem(
        await api.delete(`/admin/v1/connections/${mine?.id ?? ''}?reason=${'x'.repeat(124)}`).set(auth),
        400,
      );
      const closing = closed(ws);
      await api
        .delete(`/admin/v1/connections/${mine?.id ?? ''}?code=4001&reason=maintenance`)
        .set(auth)
        .expect(200);
      assert.deepEqual(await closing, { code: 4001, reason: 'maintenance' });
      problem(await api.delete(`/admin/v1/connections/${mine?.id ?? ''}`).set(auth), 404);
    });
  });

  describe('bodies, audit and OpenAPI', () => {
    it('413 for an oversize body and 400 for invalid JSON, as problem+json', async () => {
      const big = JSON.stringify({ origin: 'https://a.example', endpoint: 'x'.repeat(70 * 1024) });
      problem(
        await api.post('/admin/v1/origins').set(auth).set('Content-Type', 'application/json').send(big),
        413,
      );
      problem(
        await api
          .post('/admin/v1/origins')
          .set(auth)
          .set('Content-Type', 'application/json')
          .send('{"origin":'),
        400,
      );
    });

    it('400 for a body nested deeper than 64 levels (3,000 under the size limit), as problem+json; the API still answers', async () => {
      const deep = `{"origin":${'['.repeat(3000)}${']'.repeat(3000)}}`;
      const refused = problem(
        await api.post('/admin/v1/origins').set(auth).set('Content-Type', 'application/json').send(deep),
        400,
      );
      assert.match(String(refused['detail']), /nested/);
      await api.get('/admin/v1/origins').set(auth).expect(200);
    });

    it('records every change with who, what, before and after', async () => {
      const added = await api
        .post('/admin/v1/origins')
        .set(auth)
        .send({ origin: 'https://audited.example' })
        .expect(201);
      await api
        .delete(`/admin/v1/origins/${added.body.id as string}`)
        .set(auth)
        .expect(200);
      const res = await api.get('/admin/v1/audit?limit=2').set(auth).expect(200);
      const [removed, add] = res.body as { action: string; actor: string; before: unknown; after: unknown }[];
      assert.deepEqual(
        [removed?.action, removed?.actor, removed?.after],
        ['origin.remove', 'admin-token-1', null],
      );
      assert.equal((add?.after as { origin: string }).origin, 'https://audited.example');
      assert.deepEqual(badFields(await api.get('/admin/v1/audit?limit=0').set(auth)), ['limit']);
    });

    it('serves the OpenAPI document and its interactive page', async () => {
      const doc = await api.get('/admin/openapi.json').expect(200);
      assert.ok(doc.body.paths['/admin/v1/origins']);
      assert.ok(doc.body.paths['/admin/v1/credentials/tokens']);
      // A protocol's routes come with its module: this broker runs none of OCPP.
      assert.equal(doc.body.paths['/admin/v1/charge-points'], undefined);
      await api.get('/admin/v1/charge-points').set(auth).expect(404);
      const page = await api.get('/admin/docs').expect(200);
      assert.match(page.text, /swagger/i);
    });
  });
});

describe('admin API with no admin token configured', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker({
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
  });
  after(() => broker.close());

  it('answers loopback clients and says so at start; refuses requests that came through a proxy', async () => {
    const api = request(http(broker));
    await api.get('/admin/v1/endpoints').expect(200);
    problem(await api.get('/admin/v1/endpoints').set('X-Forwarded-For', '203.0.113.9'), 403);
    problem(await api.get('/admin/v1/endpoints').set('X-Real-IP', '203.0.113.9'), 403);
    assert.match(broker.logText(), /answers loopback clients only/);
  });

  it('refuses a browser page of another site: DNS rebinding (Host) and cross-site requests (Origin)', async () => {
    const api = request(http(broker));
    const port = new URL(http(broker)).port;
    const mint = () => api.post('/admin/v1/credentials/tokens').send({ name: 'rebound', scopes: ['admin'] });
    // A page of attacker.example whose name now resolves to 127.0.0.1 sends its own Host and Origin.
    problem(
      await mint().set('Host', `attacker.example:${port}`).set('Origin', `http://attacker.example:${port}`),
      403,
    );
    problem(await mint().set('Origin', 'https://evil.example'), 403);
    problem(await mint().set('Origin', 'null'), 403);
    problem(
      await api.post('/admin/v1/origins').set('Origin', 'https://evil.example').type('form').send('a=b'),
      403,
    );
    // Tools and pages of this machine still get in.
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      await api.get('/admin/v1/endpoints').set('Host', host).expect(200);
    }
    await api.get('/admin/v1/endpoints').set('Origin', 'http://localhost:3000').expect(200);
  });

  it('refuses a request whose target names another host (absolute form), or that carries two Host fields', async () => {
    const absolute = await rawExchange(
      broker.port,
      'GET http://evil.example/admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
    );
    assert.equal(absolute.status, 403, absolute.raw);
    const twoHosts = await rawExchange(
      broker.port,
      'GET /admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n',
    );
    assert.equal(twoHosts.status, 403, twoHosts.raw);
    const loopbackAbsolute = await rawExchange(
      broker.port,
      `GET http://127.0.0.1:${broker.port}/admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    assert.equal(loopbackAbsolute.status, 200, loopbackAbsolute.raw);
  });
});
