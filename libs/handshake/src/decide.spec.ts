import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideHandshake } from './decide.js';
import { compileAllowlist } from './match-origin.js';
import {
  CredentialError,
  type Accept,
  type AuthPolicy,
  type ConnectionCounts,
  type CredentialCarrier,
  type EndpointSpec,
  type HandshakeContext,
  type HandshakeDecision,
  type ModuleSpec,
  type Reject,
} from './types.js';

const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

const noAuth: AuthPolicy = {
  mode: 'none',
  carriers: new Set(['query', 'cookie', 'header', 'subprotocol', 'first-message']),
  queryParam: 'token',
  cookieName: 'token',
  subprotocolPrefix: 'bearer.',
  certificateSubject: 'cn',
};

function endpoint(overrides: Partial<EndpointSpec> & { path: string }): EndpointSpec {
  const path = overrides.path;
  return {
    match: (pathname) => (pathname === path ? {} : null),
    subprotocols: ['chat.v1', 'echo.v1'],
    subprotocolOrder: 'client',
    defaultModule: 'echo.v1',
    origins: compileAllowlist(['https://app.example.com', 'https://*.example.org', 'null']),
    requireOrigin: false,
    auth: noAuth,
    maxConnections: undefined,
    ...overrides,
  };
}

const ocpp: EndpointSpec = {
  ...endpoint({ path: '/ocpp' }),
  path: '/ocpp/:id',
  match: (pathname) => {
    const m = /^\/ocpp\/([^/]+)$/.exec(pathname);
    return m ? { id: decodeURIComponent(m[1] as string) } : null;
  },
  subprotocols: ['known.v1'],
};

const endpoints = [
  endpoint({ path: '/chat' }),
  endpoint({ path: '/nodefault', defaultModule: undefined }),
  endpoint({ path: '/omit', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }),
  endpoint({ path: '/strict', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' }),
  endpoint({ path: '/same', origins: null }),
  endpoint({ path: '/need-origin', requireOrigin: true }),
  endpoint({ path: '/auth', auth: { ...noAuth, mode: 'required' } }),
  endpoint({ path: '/auth-no-first', auth: { ...noAuth, mode: 'required', carriers: new Set(['query']) } }),
  endpoint({ path: '/optional', auth: { ...noAuth, mode: 'optional' } }),
  endpoint({ path: '/own-auth', subprotocols: ['own.v1'], auth: { ...noAuth, mode: 'required' } }),
  endpoint({
    path: '/own-auth-header-only',
    subprotocols: ['own.v1'],
    auth: { ...noAuth, mode: 'required', carriers: new Set(['header']) },
  }),
  endpoint({ path: '/capped', maxConnections: 1 }),
  endpoint({ path: '/server-order', subprotocolOrder: 'server' }),
  ocpp,
];

const modules = new Map<string, ModuleSpec>(
  [
    { name: 'chat.v1', onUnsupported: 'reject', deflate: false, ownFirstMessageAuth: false },
    { name: 'echo.v1', onUnsupported: 'omit', deflate: {}, ownFirstMessageAuth: false },
    { name: 'own.v1', onUnsupported: 'reject', deflate: false, ownFirstMessageAuth: true },
    { name: 'known.v1', onUnsupported: 'reject', deflate: false, ownFirstMessageAuth: false },
  ].map((m) => [m.name, m as ModuleSpec]),
);

function counts(
  overrides: Partial<{
    draining: boolean;
    unavailable: string;
    total: number;
    endpoint: number;
    address: number;
    wait: number;
  }> = {},
) {
  const c: ConnectionCounts = {
    draining: overrides.draining ?? false,
    unavailable: overrides.unavailable ?? null,
    total: () => overrides.total ?? 0,
    forEndpoint: () => overrides.endpoint ?? 0,
    forAddress: () => overrides.address ?? 0,
    reserve: () => () => undefined,
    takeHandshake: () => overrides.wait ?? 0,
  };
  return c;
}

function context(c: ConnectionCounts = counts()): HandshakeContext {
  return {
    endpoints,
    modules,
    limits: { maxConnections: 100, maxConnectionsPerAddress: 10, retryAfterSec: 7 },
    counts: c,
    hooks: {
      // Only the decision is under test here; the jose verifier has its own spec and e2e tests.
      verifyToken: async (token, carrier) => {
        if (token === 'good') return { subject: 'alice', claims: { sub: 'alice' }, carrier };
        if (token === 'chat-only') return { subject: 'bob', claims: { sub: 'bob' }, carrier };
        if (token === 'expired') throw new CredentialError('the token has expired');
        throw new CredentialError('the signature is invalid');
      },
      authorize: (principal, spec) =>
        principal.subject === 'bob' && spec.path !== '/chat'
          ? { title: 'Endpoint not allowed', detail: `This credential does not open ${spec.path}.` }
          : null,
      checkModule: async (name, ctx) =>
        name === 'known.v1' && ctx.params['id'] !== 'cp-1'
          ? { status: 404, title: 'Unknown charge point', detail: 'not in the store' }
          : null,
    },
  };
}

interface Req {
  method?: string;
  httpVersion?: string;
  url?: string;
  headers?: Record<string, string | string[] | null>;
}

function decide(req: Req, ctx = context()): Promise<HandshakeDecision> {
  const base: Record<string, string | string[] | null> = {
    Host: 'broker.example.com',
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': KEY,
    'Sec-WebSocket-Version': '13',
  };
  const rawHeaders: string[] = [];
  for (const [name, value] of Object.entries({ ...base, ...req.headers })) {
    if (value === null) continue;
    for (const v of Array.isArray(value) ? value : [value]) rawHeaders.push(name, v);
  }
  return decideHandshake(
    {
      method: req.method ?? 'GET',
      httpVersion: req.httpVersion ?? '1.1',
      url: req.url ?? '/chat',
      rawHeaders,
      remoteAddress: '10.0.0.1',
      secure: false,
    },
    ctx,
  );
}

async function rejected(req: Req, status: number, ctx?: HandshakeContext): Promise<Reject> {
  const d = await decide(req, ctx);
  assert.equal(d.kind, 'reject', `expected a ${status} rejection, got ${JSON.stringify(d.kind)}`);
  assert.equal((d as Reject).status, status, (d as Reject).problem.detail);
  return d as Reject;
}

async function accepted(req: Req, ctx?: HandshakeContext): Promise<Accept> {
  const d = await decide(req, ctx);
  assert.equal(d.kind, 'accept', d.kind === 'reject' ? `${d.status} ${d.problem.detail}` : d.kind);
  return d as Accept;
}

describe('decideHandshake: the contract, row by row', () => {
  it('valid -> accept, the first offered subprotocol the endpoint hosts', async () => {
    const d = await accepted({ headers: { 'Sec-WebSocket-Protocol': 'chat.v1' } });
    assert.equal(d.protocol, 'chat.v1');
    assert.equal(d.module, 'chat.v1');
    assert.equal(d.deflate, null);
    assert.equal(d.principal, null);
  });

  it('path matches no endpoint -> 404', async () => {
    await rejected({ url: '/nowhere' }, 404);
  });

  it('method other than GET with upgrade intent -> 405 with Allow: GET', async () => {
    const d = await rejected({ method: 'POST' }, 405);
    assert.equal(d.headers['Allow'], 'GET');
  });

  it('HTTP/1.0 -> 400', async () => {
    await rejected({ httpVersion: '1.0' }, 400);
  });

  it('missing Host -> 400; two Host headers -> 400', async () => {
    await rejected({ headers: { Host: null } }, 400);
    await rejected({ headers: { Host: ['a.example', 'b.example'] } }, 400);
  });

  it('Host that is not host[:port] (RFC 9112 section 3.2) -> 400', async () => {
    for (const host of [
      'a b',
      'evil@broker.example.com',
      'broker.example.com/chat',
      'broker.example.com:8o',
      '[::1',
      ':80',
    ]) {
      await rejected({ headers: { Host: host } }, 400);
    }
    for (const host of [
      'broker.example.com:8080',
      '127.0.0.1',
      '[::1]:8080',
      '[fe80::1]',
      'xn--bcher-kva.example',
      'a_b.local:',
    ]) {
      await accepted({ headers: { Host: host } });
    }
  });

  it('absolute-form request target (RFC 9112 section 3.2.2): its path and query are used', async () => {
    const d = await accepted({
      url: 'http://broker.example.com/chat?x=1',
      headers: { 'Sec-WebSocket-Protocol': 'chat.v1' },
    });
    assert.equal(d.endpoint.path, '/chat');
    await accepted({ url: 'WS://broker.example.com:8080/chat' });
    await rejected({ url: 'https://broker.example.com/nowhere' }, 404);
    await rejected({ url: 'http://broker.example.com' }, 404);
  });

  it('Connection has upgrade but Upgrade is missing or not websocket -> 400', async () => {
    await rejected({ headers: { Upgrade: null } }, 400);
    await rejected({ headers: { Upgrade: 'h2c' } }, 400);
  });

  it('Upgrade: websocket without the upgrade token in Connection -> 400', async () => {
    await rejected({ headers: { Connection: 'keep-alive' } }, 400);
  });

  it('no Upgrade and no Connection: upgrade on an endpoint path -> plain page; elsewhere -> pass', async () => {
    const plain = await decide({ headers: { Upgrade: null, Connection: null, Accept: 'text/html,*/*' } });
    assert.equal(plain.kind, 'plain');
    assert.equal(plain.kind === 'plain' && plain.acceptsHtml, true);
    const json = await decide({ headers: { Upgrade: null, Connection: 'keep-alive' } });
    assert.equal(json.kind === 'plain' && json.acceptsHtml, false);
    assert.equal(
      (await decide({ url: '/health', headers: { Upgrade: null, Connection: null } })).kind,
      'pass',
    );
    assert.equal(
      (await decide({ method: 'POST', headers: { Upgrade: null, Connection: null } })).kind,
      'pass',
    );
  });

  it('header values compared case-insensitively; Connection is a token list', async () => {
    await accepted({ headers: { Upgrade: 'WebSocket', Connection: 'keep-alive, UPGRADE' } });
    await accepted({ headers: { Connection: ['keep-alive', 'Upgrade'] } });
  });

  it('Sec-WebSocket-Key missing, repeated, not base64, or not 16 bytes -> 400', async () => {
    await rejected({ headers: { 'Sec-WebSocket-Key': null } }, 400);
    await rejected({ headers: { 'Sec-WebSocket-Key': [KEY, KEY] } }, 400);
    await rejected({ headers: { 'Sec-WebSocket-Key': '!!!!not-base64-at-all!!!' } }, 400);
    await rejected({ headers: { 'Sec-WebSocket-Key': Buffer.alloc(15).toString('base64') } }, 400);
    await rejected({ headers: { 'Sec-WebSocket-Key': Buffer.alloc(17).toString('base64') } }, 400);
  });

  it('Sec-WebSocket-Version missing, repeated, or not 13 -> 426 with Sec-WebSocket-Version: 13', async () => {
    for (const version of [null, ['13', '13'], '8', '14', '13.0', '']) {
      const d = await rejected({ headers: { 'Sec-WebSocket-Version': version } }, 426);
      assert.equal(d.headers['Sec-WebSocket-Version'], '13');
      assert.equal(d.headers['Upgrade'], 'websocket');
    }
  });

  it('a request body (Content-Length > 0 or Transfer-Encoding) -> 400', async () => {
    await rejected({ headers: { 'Content-Length': '5' } }, 400);
    await rejected({ headers: { 'Transfer-Encoding': 'chunked' } }, 400);
    await accepted({ headers: { 'Content-Length': '0' } });
  });

  it('Origin not on the allowlist -> 403; exact, host case-insensitive, *. subdomains, null only if listed', async () => {
    await accepted({ headers: { Origin: 'https://app.example.com' } });
    await accepted({ headers: { Origin: 'https://APP.example.com' } });
    await accepted({ headers: { Origin: 'https://a.b.example.org' } });
    await accepted({ headers: { Origin: 'null' } });
    await rejected({ headers: { Origin: 'https://evil.example.net' } }, 403);
    await rejected({ headers: { Origin: 'http://app.example.com' } }, 403);
    await rejected({ headers: { Origin: 'https://app.example.com:8443' } }, 403);
    await rejected({ headers: { Origin: 'https://example.org' } }, 403);
    await rejected({ url: '/same', headers: { Origin: 'null' } }, 403);
  });

  it('no allowlist configured -> only same-origin pages', async () => {
    await accepted({ url: '/same', headers: { Origin: 'http://broker.example.com' } });
    await rejected({ url: '/same', headers: { Origin: 'https://app.example.com' } }, 403);
  });

  it('no Origin -> allowed, unless the endpoint sets requireOrigin', async () => {
    await accepted({});
    await rejected({ url: '/need-origin' }, 403);
    await accepted({ url: '/need-origin', headers: { Origin: 'https://app.example.com' } });
  });

  it('auth required and credential missing, malformed, badly signed or expired -> 401 with WWW-Authenticate', async () => {
    const missing = await rejected({ url: '/auth-no-first' }, 401);
    assert.match(missing.headers['WWW-Authenticate'] ?? '', /^Bearer /);
    await rejected({ url: '/auth', headers: { Authorization: 'Basic YWxpY2U6cGFzcw==' } }, 401);
    await rejected({ url: '/auth', headers: { Authorization: 'Bearer forged' } }, 401);
    const expired = await rejected({ url: '/auth?token=expired' }, 401);
    assert.match(expired.problem.detail, /expired/);
    await rejected({ url: '/auth?token=' }, 401);
  });

  it('a valid credential that does not open this endpoint -> 403, before subprotocol selection', async () => {
    const refused = await rejected(
      { url: '/optional?token=chat-only', headers: { 'Sec-WebSocket-Protocol': 'nope' } },
      403,
    );
    assert.match(refused.problem.detail, /does not open \/optional/);
    assert.equal((await accepted({ url: '/optional?token=good' })).principal?.subject, 'alice');
  });

  it('every carrier: query, cookie, Authorization, subprotocol item', async () => {
    assert.equal((await accepted({ url: '/auth?token=good' })).principal?.carrier, 'query');
    assert.equal(
      (await accepted({ url: '/auth', headers: { Cookie: 'a=1; token=good' } })).principal?.carrier,
      'cookie',
    );
    const header = await accepted({ url: '/auth', headers: { Authorization: 'Bearer good' } });
    assert.equal(header.principal?.subject, 'alice');
    const sub = await accepted({
      url: '/auth',
      headers: { 'Sec-WebSocket-Protocol': 'bearer.good, chat.v1' },
    });
    assert.equal(sub.principal?.carrier, 'subprotocol');
    assert.equal(sub.protocol, 'chat.v1', 'the token item is never selected');
  });

  it('a carrier the endpoint does not accept is not read', async () => {
    await rejected({ url: '/auth-no-first', headers: { Cookie: 'token=good' } }, 401);
  });

  it('the token item is never echoed, even when it is the only offer', async () => {
    const d = await accepted({ url: '/auth', headers: { 'Sec-WebSocket-Protocol': 'bearer.good' } });
    assert.equal(d.protocol, null);
    assert.equal(d.principal?.subject, 'alice');
  });

  it('auth required with no credential where first-message auth is allowed -> accept and hold', async () => {
    const d = await accepted({ url: '/auth' });
    assert.equal(d.awaitFirstMessageAuth, true);
    assert.equal(d.principal, null);
  });

  it('a module with its own first-message auth takes the unauthenticated connection itself', async () => {
    const d = await accepted({ url: '/own-auth', headers: { 'Sec-WebSocket-Protocol': 'own.v1' } });
    assert.equal(d.awaitFirstMessageAuth, false);
  });

  it('auth required, carriers without first-message -> 401 even for a module with its own auth message', async () => {
    await rejected({ url: '/own-auth-header-only', headers: { 'Sec-WebSocket-Protocol': 'own.v1' } }, 401);
  });

  it('a credential present but invalid where auth is optional -> 401; none -> accepted anonymous', async () => {
    await rejected({ url: '/optional?token=forged' }, 401);
    assert.equal((await accepted({ url: '/optional' })).principal, null);
    assert.equal((await accepted({ url: '/optional?token=good' })).principal?.subject, 'alice');
  });

  it('malformed Sec-WebSocket-Protocol (not tokens, empty items, duplicates) -> 400', async () => {
    for (const value of ['chat.v1,,echo.v1', 'chat v1', 'chat.v1,', 'chat.v1, chat.v1', '"chat"', '']) {
      await rejected({ headers: { 'Sec-WebSocket-Protocol': value } }, 400);
    }
  });

  it('selection follows the client order, across several header lines', async () => {
    const d = await accepted({ headers: { 'Sec-WebSocket-Protocol': ['mqtt, echo.v1', 'chat.v1'] } });
    assert.equal(d.protocol, 'echo.v1');
  });

  it("subprotocolOrder 'server': the endpoint's first hosted subprotocol the client offered", async () => {
    const d = await accepted({
      url: '/server-order',
      headers: { 'Sec-WebSocket-Protocol': ['mqtt, echo.v1', 'chat.v1'] },
    });
    assert.equal(d.protocol, 'chat.v1');
    const only = await accepted({ url: '/server-order', headers: { 'Sec-WebSocket-Protocol': 'echo.v1' } });
    assert.equal(only.protocol, 'echo.v1');
  });

  it('nothing offered matches: default module "reject" -> 400 listing the subprotocols', async () => {
    const d = await rejected({ url: '/strict', headers: { 'Sec-WebSocket-Protocol': 'mqtt' } }, 400);
    assert.match(d.problem.detail, /chat\.v1/);
    await rejected({ url: '/strict' }, 400);
  });

  it('nothing offered matches: default module "omit" -> 101 without the header, to the default module', async () => {
    const d = await accepted({ url: '/omit', headers: { 'Sec-WebSocket-Protocol': 'mqtt' } });
    assert.equal(d.protocol, null);
    assert.equal(d.module, 'echo.v1');
    assert.equal((await accepted({ url: '/omit' })).protocol, null);
  });

  it('nothing offered matches and no default module -> 400', async () => {
    await rejected({ url: '/nodefault', headers: { 'Sec-WebSocket-Protocol': 'mqtt' } }, 400);
    await rejected({ url: '/nodefault' }, 400);
  });

  it("a module's own handshake check can refuse (unknown charge point -> 404); path params reach it", async () => {
    const ok = await accepted({ url: '/ocpp/cp-1', headers: { 'Sec-WebSocket-Protocol': 'known.v1' } });
    assert.deepEqual(ok.params, { id: 'cp-1' });
    await rejected({ url: '/ocpp/cp-2', headers: { 'Sec-WebSocket-Protocol': 'known.v1' } }, 404);
  });

  it('permessage-deflate: accepted only where the selected module enables it', async () => {
    const ext = { 'Sec-WebSocket-Extensions': 'permessage-deflate; client_max_window_bits' };
    const on = await accepted({ headers: { 'Sec-WebSocket-Protocol': 'echo.v1', ...ext } });
    assert.equal(on.deflate?.offer, 'permessage-deflate; client_max_window_bits');
    const off = await accepted({ headers: { 'Sec-WebSocket-Protocol': 'chat.v1', ...ext } });
    assert.equal(off.deflate, null);
  });

  it('invalid or unknown parameters, or unknown extensions, are declined, never a failure', async () => {
    for (const value of [
      'permessage-deflate; server_max_window_bits=99',
      'permessage-deflate; foo=bar',
      'x-webkit-deflate-frame',
      'permessage-deflate; ;;',
    ]) {
      const d = await accepted({
        headers: { 'Sec-WebSocket-Protocol': 'echo.v1', 'Sec-WebSocket-Extensions': value },
      });
      assert.equal(d.deflate, null, value);
    }
  });

  it('too many connections: global and per endpoint -> 503, per address -> 429, with Retry-After', async () => {
    const global = await rejected({}, 503, context(counts({ total: 100 })));
    assert.equal(global.headers['Retry-After'], '7');
    await rejected({ url: '/capped' }, 503, context(counts({ endpoint: 1 })));
    const perAddress = await rejected({}, 429, context(counts({ address: 10 })));
    assert.equal(perAddress.headers['Retry-After'], '7');
  });

  it('too many handshakes from one address -> 429, Retry-After the seconds its rate asks for', async () => {
    const d = await rejected({}, 429, context(counts({ wait: 3 })));
    assert.equal(d.headers['Retry-After'], '3');
    assert.match(d.problem.detail, /Too many handshakes/);
  });

  it('the handshake rate is taken before any credential is checked', async () => {
    let verified = 0;
    const c = context(counts({ wait: 1 }));
    const hooks = {
      ...c.hooks,
      verifyToken: (token: string, carrier: CredentialCarrier) => {
        verified++;
        return c.hooks.verifyToken(token, carrier);
      },
    };
    await rejected({ url: '/auth?token=forged' }, 429, { ...c, hooks });
    assert.equal(verified, 0);
  });

  it('a slot is held from the limit check: released on a later refusal, handed over on accept', async () => {
    let held = 0;
    const c: ConnectionCounts = {
      ...counts(),
      reserve: () => {
        held++;
        let once = true;
        return () => {
          if (once) held--;
          once = false;
        };
      },
    };
    await rejected({ url: '/auth?token=forged' }, 401, context(c));
    await rejected({ headers: { 'Sec-WebSocket-Version': '8' } }, 426, context(c));
    assert.equal(held, 0, 'refusals after the limit check free their slot');
    const d = await accepted({}, context(c));
    assert.equal(held, 1, 'an accepted handshake keeps its slot until the gateway counts the connection');
    d.release();
    d.release();
    assert.equal(held, 0);
  });

  it('auth required with no way to authenticate later -> 401 before subprotocol selection', async () => {
    await rejected({ url: '/auth-no-first', headers: { 'Sec-WebSocket-Protocol': 'mqtt' } }, 401);
  });

  it('stray upgrade headers off the endpoints are not ours (curl h2c on /health) -> pass', async () => {
    const d = await decide({
      url: '/health',
      headers: { Upgrade: 'h2c', Connection: 'Upgrade, HTTP2-Settings' },
    });
    assert.equal(d.kind, 'pass');
    assert.equal((await decide({ url: '/health', headers: { Upgrade: null } })).kind, 'pass');
  });

  it('a module check answering a non-error status refuses with 500', async () => {
    const ctx = context();
    const weird: HandshakeContext = {
      ...ctx,
      hooks: { ...ctx.hooks, checkModule: async () => ({ status: 101, title: 'x', detail: 'y' }) },
    };
    await rejected({}, 500, weird);
  });

  it('a module check refusal carries its own headers (401 WWW-Authenticate), never framing headers', async () => {
    const ctx = context();
    const basic: HandshakeContext = {
      ...ctx,
      hooks: {
        ...ctx.hooks,
        checkModule: async () => ({
          status: 401,
          title: 'Unauthorized',
          detail: 'bad password',
          headers: {
            'WWW-Authenticate': 'Basic realm="ocpp"',
            Connection: 'keep-alive',
            'Content-Length': '0',
          },
        }),
      },
    };
    const d = await rejected({}, 401, basic);
    assert.deepEqual(d.headers, { 'WWW-Authenticate': 'Basic realm="ocpp"' });
  });

  it('draining -> 503', async () => {
    await rejected({}, 503, context(counts({ draining: true })));
  });

  it('a service new connections need is down -> 503 with its reason and Retry-After', async () => {
    const d = await rejected({}, 503, context(counts({ unavailable: 'NATS is unreachable.' })));
    assert.equal(d.problem.detail, 'NATS is unreachable.');
    assert.ok(d.headers['Retry-After'] !== undefined);
  });

  it('order: limits are checked before the version and before any signature', async () => {
    const full = context(counts({ total: 100 }));
    await rejected({ url: '/auth?token=forged', headers: { 'Sec-WebSocket-Version': '8' } }, 503, full);
    await rejected({ url: '/auth?token=forged', headers: { 'Sec-WebSocket-Version': '8' } }, 426);
    await rejected({ url: '/auth?token=forged', headers: { Origin: 'https://evil.example.net' } }, 403);
    await rejected({ url: '/nowhere', headers: { 'Sec-WebSocket-Key': null } }, 400);
  });
});

describe('decideHandshake: HTTP/2 extended CONNECT (RFC 8441)', () => {
  /** An extended CONNECT as the gateway hands it over: :authority as Host, no Upgrade, Connection or key. */
  function connect(
    overrides: {
      protocol?: string | undefined;
      method?: string;
      url?: string;
      headers?: Record<string, string>;
    } = {},
  ): Promise<HandshakeDecision> {
    const headers: Record<string, string> = {
      Host: 'broker.example.com',
      'Sec-WebSocket-Version': '13',
      ...overrides.headers,
    };
    return decideHandshake(
      {
        method: overrides.method ?? 'CONNECT',
        httpVersion: '2.0',
        url: overrides.url ?? '/chat',
        rawHeaders: Object.entries(headers).flat(),
        remoteAddress: '10.0.0.1',
        secure: true,
        protocol: 'protocol' in overrides ? overrides.protocol : 'websocket',
      },
      context(),
    );
  }
  const status = (d: HandshakeDecision) => (d.kind === 'reject' ? d.status : d.kind);

  it('accepted without Upgrade, Connection or Sec-WebSocket-Key; the subprotocol and the extensions as over HTTP/1.1', async () => {
    const d = await connect({
      headers: {
        'Sec-WebSocket-Protocol': 'chat.v1',
        'Sec-WebSocket-Extensions': 'permessage-deflate',
        Origin: 'https://app.example.com',
      },
    });
    assert.equal(d.kind, 'accept');
    assert.equal((d as Accept).protocol, 'chat.v1');
  });

  it('a :protocol other than websocket, or none -> 400; a method other than CONNECT -> 405', async () => {
    const bad = await connect({ protocol: 'webtransport' });
    assert.equal(status(bad), 400);
    assert.match((bad as Reject).problem.detail, /:protocol/);
    assert.equal(status(await connect({ protocol: undefined })), 400);
    const get = await connect({ method: 'GET' });
    assert.equal(status(get), 405);
    assert.equal((get as Reject).headers['Allow'], 'CONNECT');
  });

  it('the same refusals as over HTTP/1.1: path, authority, version (without Upgrade), origin', async () => {
    assert.equal(status(await connect({ url: '/nowhere' })), 404);
    assert.equal(status(await connect({ headers: { Host: 'bad host' } })), 400);
    const version = await connect({ headers: { 'Sec-WebSocket-Version': '8' } });
    assert.equal(status(version), 426);
    assert.equal((version as Reject).headers['Sec-WebSocket-Version'], '13');
    assert.equal((version as Reject).headers['Upgrade'], undefined);
    assert.equal(status(await connect({ headers: { Origin: 'https://evil.example' } })), 403);
  });
});
