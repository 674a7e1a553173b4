import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { GOOD_KEY, rawExchange, upgradeRequest } from './support/raw-http.js';
import { nextMessage, opened, waitFor } from './support/ws-helpers.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';

const expectedAccept = (key: string) =>
  createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

describe('handshake over real sockets', () => {
  let broker: TestBroker;

  before(async () => {
    broker = await startTestBroker({
      http: { maxHeaderSize: 4096, headersTimeoutMs: 500, requestTimeoutMs: 30_000 },
      endpoints: [
        {
          path: '/echo',
          subprotocols: ['echo.v1', 'chat.v1'],
          defaultModule: 'echo.v1',
          origins: ['https://app.example.com'],
        },
        { path: '/chat', subprotocols: ['chat.v1'], defaultModule: 'chat.v1' },
        { path: '/any', subprotocols: ['chat.v1'] },
        { path: '/cp/:id', subprotocols: ['known.v1'] },
        { path: '/capped', subprotocols: ['echo.v1'], defaultModule: 'echo.v1', maxConnections: 1 },
      ],
    });
  });
  after(() => broker.close());

  it('valid -> 101 with Upgrade, Connection, the right Sec-WebSocket-Accept and no body', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' }),
      300,
    );
    assert.equal(res.status, 101);
    assert.equal(res.headers['upgrade'], 'websocket');
    assert.equal(res.headers['connection'], 'Upgrade');
    assert.equal(res.headers['sec-websocket-accept'], expectedAccept(GOOD_KEY));
    assert.equal(res.headers['sec-websocket-protocol'], 'echo.v1');
    assert.equal(res.headers['content-length'], undefined);
    assert.equal(res.body, '', 'nothing follows the 101 until a frame is sent');
  });

  const rows: [string, string, number][] = [
    ['path matches no endpoint', upgradeRequest('/nope'), 404],
    ['HTTP/1.0', upgradeRequest('/echo').replace('HTTP/1.1', 'HTTP/1.0'), 400],
    ['missing Host', upgradeRequest('/echo', { Host: null }), 400],
    ['Upgrade missing with Connection: upgrade', upgradeRequest('/echo', { Upgrade: null }), 400],
    ['Upgrade not websocket', upgradeRequest('/echo', { Upgrade: 'h2c' }), 400],
    ['key missing', upgradeRequest('/echo', { 'Sec-WebSocket-Key': null }), 400],
    ['key not base64', upgradeRequest('/echo', { 'Sec-WebSocket-Key': 'not base64 at all!!!!!!!' }), 400],
    ['key not 16 bytes', upgradeRequest('/echo', { 'Sec-WebSocket-Key': 'AAAAAAAAAAAAAAAAAAAA' }), 400],
    ['body with Content-Length', upgradeRequest('/echo', { 'Content-Length': '4' }) + 'abcd', 400],
    [
      'body with Transfer-Encoding',
      upgradeRequest('/echo', { 'Transfer-Encoding': 'chunked' }) + '0\r\n\r\n',
      400,
    ],
    ['origin not allowed', upgradeRequest('/echo', { Origin: 'https://evil.example' }), 403],
    [
      'malformed subprotocol list',
      upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1,,chat.v1' }),
      400,
    ],
    ['nothing offered, default rejects', upgradeRequest('/chat', { 'Sec-WebSocket-Protocol': 'mqtt' }), 400],
    ['nothing offered, no default module', upgradeRequest('/any'), 400],
    [
      'module check refuses (unknown id)',
      upgradeRequest('/cp/stranger', { 'Sec-WebSocket-Protocol': 'known.v1' }),
      404,
    ],
  ];
  for (const [name, request, status] of rows) {
    it(`${name} -> ${status}, problem+json, Connection: close, socket closed`, async () => {
      const res = await rawExchange(broker.port, request);
      assert.equal(res.status, status, res.raw);
      assert.equal(res.headers['connection'], 'close');
      assert.equal(res.headers['content-type'], 'application/problem+json');
      const problem = JSON.parse(res.body) as { status: number; title: string; detail: string };
      assert.equal(problem.status, status);
      assert.ok(problem.title.length > 0 && problem.detail.length > 0);
      assert.ok(res.closed, 'the server closed the connection');
    });
  }

  it('method other than GET with upgrade intent -> 405 with Allow: GET', async () => {
    const res = await rawExchange(broker.port, upgradeRequest('/echo').replace('GET', 'POST'));
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET');
  });

  it('version missing, repeated or not 13 -> 426 with Sec-WebSocket-Version: 13 and Upgrade: websocket', async () => {
    for (const version of [null, '8', '13\r\nSec-WebSocket-Version: 13']) {
      const res = await rawExchange(
        broker.port,
        upgradeRequest('/echo', { 'Sec-WebSocket-Version': version }),
      );
      assert.equal(res.status, 426, res.raw);
      assert.equal(res.headers['sec-websocket-version'], '13');
      assert.equal(res.headers['upgrade'], 'websocket');
      // RFC 9110 section 7.8: whoever sends Upgrade lists it in Connection.
      assert.equal(res.headers['connection'], 'Upgrade, close');
    }
  });

  it('absolute-form request target -> 101 (RFC 9112 section 3.2.2); a Host that is not host[:port] -> 400', async () => {
    const absolute = await rawExchange(broker.port, upgradeRequest('http://127.0.0.1/echo'), 300);
    assert.equal(absolute.status, 101, absolute.raw);
    const badHost = await rawExchange(broker.port, upgradeRequest('/echo', { Host: 'evil@127.0.0.1' }));
    assert.equal(badHost.status, 400, badHost.raw);
  });

  it('the default "reject" answer lists the supported subprotocols', async () => {
    const res = await rawExchange(broker.port, upgradeRequest('/chat', { 'Sec-WebSocket-Protocol': 'mqtt' }));
    assert.match(res.body, /chat\.v1/);
  });

  it('header values are case-insensitive and Connection is a token list', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/echo', { Upgrade: 'WebSocket', Connection: 'keep-alive, UPGRADE' }),
      300,
    );
    assert.equal(res.status, 101);
  });

  it('subprotocols split over several header lines are one list, chosen in client order', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/echo', {
        'Sec-WebSocket-Protocol': 'mqtt\r\nSec-WebSocket-Protocol: chat.v1, echo.v1',
      }),
      300,
    );
    assert.equal(res.status, 101);
    assert.equal(res.headers['sec-websocket-protocol'], 'chat.v1');
  });

  it('"omit" default: 101 without Sec-WebSocket-Protocol when nothing offered matches', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'mqtt' }),
      300,
    );
    assert.equal(res.status, 101);
    assert.equal(res.headers['sec-websocket-protocol'], undefined);
  });

  it('a plain GET on an endpoint path (upgrade headers stripped) -> 200 page, JSON or HTML, counted', async () => {
    const json = await fetch(`http://127.0.0.1:${broker.port}/echo`);
    assert.equal(json.status, 200);
    const body = (await json.json()) as { endpoint: string; subprotocols: string[]; detail: string };
    assert.equal(body.endpoint, '/echo');
    assert.deepEqual(body.subprotocols, ['echo.v1', 'chat.v1']);
    assert.match(body.detail, /proxy/);
    const html = await fetch(`http://127.0.0.1:${broker.port}/echo`, { headers: { Accept: 'text/html' } });
    assert.match(html.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await html.text(), /<code>echo\.v1<\/code>/);
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    assert.match(metrics, /broker_upgrade_headers_missing_total\{endpoint="\/echo"\} 2/);
  });

  it('headers over the size limit -> 431', async () => {
    const res = await rawExchange(broker.port, upgradeRequest('/echo', { 'X-Padding': 'a'.repeat(8000) }));
    assert.equal(res.status, 431);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.equal((JSON.parse(res.body) as { status: number }).status, 431);
  });

  it('a client that never finishes its headers (slowloris) is cut off', async () => {
    const res = await rawExchange(
      broker.port,
      'GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n',
      5000,
    );
    assert.equal(res.status, 408, res.raw);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    assert.ok(res.closed);
  });

  it('a request pipelined behind a rejected one is never served', async () => {
    const first = upgradeRequest('/nope');
    const second = upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' });
    const res = await rawExchange(broker.port, first + second);
    assert.equal(res.status, 404);
    assert.equal(res.raw.match(/HTTP\/1\.1 /g)?.length, 1, res.raw);
  });

  it('an upgrade pipelined behind a refused plain-HTTP upgrade attempt gets no 101', async () => {
    const refused = 'GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n\r\n';
    const res = await rawExchange(
      broker.port,
      refused + upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' }),
    );
    assert.equal(res.status, 400);
    assert.doesNotMatch(res.raw, /101 Switching Protocols/);
    assert.equal(res.raw.match(/HTTP\/1\.1 /g)?.length, 1, res.raw);
  });

  it('an upgrade pipelined behind an ordinary request waits for its response: the 200, then the 101', async () => {
    const res = await rawExchange(
      broker.port,
      'GET /admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' +
        upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' }),
    );
    const statuses = [...res.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
    assert.deepEqual(statuses, ['200', '101'], res.raw.slice(0, 300));
  });

  it('a connection that pipelines past 32 waiting requests is closed, and what it queued is not served', async () => {
    const request = 'GET /admin/v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    // Closed with requests unread, the socket may be reset before anything was answered.
    const res = await rawExchange(broker.port, request.repeat(2000), 10_000).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ECONNRESET') throw err;
        return null;
      },
    );
    const answered = res?.raw.match(/HTTP\/1\.1 /g)?.length ?? 0;
    assert.ok(res === null || res.closed, `the connection is still open after ${answered} answers`);
    assert.ok(answered <= 32, `${answered} of 2,000 pipelined requests answered`);
    const bystander = await rawExchange(broker.port, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(bystander.status, 200);
  });

  it('an upgrade pipelined behind a probe waits for the probe: the 200, then the 101; a refused upgrade leaves the probe answered', async () => {
    for (const probe of ['/metrics', '/health/ready', '/health']) {
      const res = await rawExchange(
        broker.port,
        `GET ${probe} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` +
          upgradeRequest('/echo', { 'Sec-WebSocket-Protocol': 'echo.v1' }),
      );
      const statuses = [...res.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(statuses, ['200', '101'], `${probe}: ${res.raw.slice(0, 300)}`);
      const refused = await rawExchange(
        broker.port,
        `GET ${probe} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n` + upgradeRequest('/nope'),
      );
      const refusedStatuses = [...refused.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => m[1]);
      assert.deepEqual(refusedStatuses, ['200', '404'], `${probe}: ${refused.raw.slice(0, 300)}`);
    }
  });

  it('a plain GET pipelined behind a refusal is not handled at all', async () => {
    const before = await plainCount();
    const refused = 'GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\n\r\n';
    await rawExchange(broker.port, refused + 'GET /echo HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(await plainCount(), before);
  });

  it('stray upgrade headers on a non-WebSocket route are ignored, as Node ignores them (curl h2c)', async () => {
    const res = await rawExchange(
      broker.port,
      'GET /health HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n',
    );
    assert.equal(res.status, 200, res.raw);
    assert.match(res.body, /"status":"ok"/);
    const onlyConnection = await rawExchange(
      broker.port,
      'GET /health HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n',
    );
    assert.equal(onlyConnection.status, 200, onlyConnection.raw);
  });

  it('a module check answering a non-error status still refuses (500), never a fake success', async () => {
    const res = await rawExchange(
      broker.port,
      upgradeRequest('/cp/weird', { 'Sec-WebSocket-Protocol': 'known.v1' }),
    );
    assert.equal(res.status, 500);
  });

  it('a pipelined request behind a refused plain-HTTP upgrade attempt is not served either', async () => {
    const refused = 'GET /echo HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n';
    const res = await rawExchange(broker.port, refused + 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(res.status, 400);
    assert.equal(res.raw.match(/HTTP\/1\.1 /g)?.length, 1, res.raw);
  });

  it('permessage-deflate: negotiated where the module enables it, declined (not failed) when invalid', async () => {
    const on = await rawExchange(
      broker.port,
      upgradeRequest('/echo', {
        'Sec-WebSocket-Protocol': 'echo.v1',
        'Sec-WebSocket-Extensions':
          'permessage-deflate; server_max_window_bits=99, permessage-deflate; client_max_window_bits',
      }),
      300,
    );
    assert.equal(on.status, 101);
    assert.match(on.headers['sec-websocket-extensions'] ?? '', /^permessage-deflate/);
    const bad = await rawExchange(
      broker.port,
      upgradeRequest('/echo', {
        'Sec-WebSocket-Protocol': 'echo.v1',
        'Sec-WebSocket-Extensions': 'permessage-deflate; x=1;;',
      }),
      300,
    );
    assert.equal(bad.status, 101);
    assert.equal(bad.headers['sec-websocket-extensions'], undefined);
    const off = await rawExchange(
      broker.port,
      upgradeRequest('/echo', {
        'Sec-WebSocket-Protocol': 'chat.v1',
        'Sec-WebSocket-Extensions': 'permessage-deflate',
      }),
      300,
    );
    assert.equal(off.status, 101);
    assert.equal(off.headers['sec-websocket-extensions'], undefined);
  });

  it('compressed messages round-trip with the ws client', async () => {
    const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1', { perMessageDeflate: true });
    await opened(ws);
    assert.match(ws.extensions, /permessage-deflate/);
    const text = 'x'.repeat(10_000);
    ws.send(text);
    assert.equal(await nextMessage(ws), text);
    ws.close();
  });

  it('path parameters reach the module', async () => {
    const ws = new WebSocket(`${broker.url}/cp/known`, 'known.v1');
    assert.deepEqual(JSON.parse(await nextMessage(ws)), { id: 'known' });
    ws.close();
  });

  it('too many connections on an endpoint -> 503 with Retry-After; a slot frees on close', async () => {
    const first = new WebSocket(`${broker.url}/capped`);
    await opened(first);
    const res = await rawExchange(broker.port, upgradeRequest('/capped'));
    assert.equal(res.status, 503);
    assert.equal(res.headers['retry-after'], '5');
    first.close();
    await new Promise((resolve) => first.once('close', resolve));
    await waitFor(
      async () => (await rawExchange(broker.port, upgradeRequest('/capped'), 200)).status === 101,
    );
  });

  it('garbage and half requests do not hurt the broker or other clients', async () => {
    const ws = new WebSocket(`${broker.url}/echo`, 'echo.v1');
    await opened(ws);
    const garbage = await rawExchange(
      broker.port,
      Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x00, 0x0d, 0x0a]),
    );
    assert.equal(garbage.status, 400);
    await rawExchange(broker.port, 'GET /echo HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n', 200);
    ws.send('still here');
    assert.equal(await nextMessage(ws), 'still here');
    ws.close();
  });

  async function plainCount(): Promise<number> {
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    return Number(/broker_upgrade_headers_missing_total\{endpoint="\/echo"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  }

  it('logs one line per decision with status, endpoint, subprotocol, reason, client and duration', () => {
    const line = broker.logLines().find((l) => l['msg'] === 'handshake' && l['status'] === 403);
    assert.ok(line, 'a 403 decision was logged');
    assert.equal(line['endpoint'], '/echo');
    assert.equal(line['reason'], 'Origin not allowed');
    assert.equal(line['client'], '127.0.0.1');
    assert.equal(typeof line['durationMs'], 'number');
    const ok = broker.logLines().find((l) => l['msg'] === 'handshake' && l['status'] === 101);
    assert.equal(ok?.['subprotocol'], 'echo.v1');
  });

  it('a decision log line carries at most 256 characters of the path and of the offered subprotocols', async () => {
    const long = `/nowhere/${'a'.repeat(3000)}`;
    await rawExchange(
      broker.port,
      upgradeRequest(long, { 'Sec-WebSocket-Protocol': `x${',y'.repeat(400)}` }),
    );
    const line = broker
      .logLines()
      .find((l) => l['msg'] === 'handshake' && String(l['path']).startsWith('/nowhere/'));
    assert.ok(line);
    assert.ok(String(line['path']).length <= 300, `path of ${String(line['path']).length} characters`);
    assert.match(String(line['path']), /\(2753 more\)$/);
    assert.ok(String(line['offered']).length <= 300);
  });

  it('Upgrade: h2c on an endpoint path is a 400 naming the header, and nothing is logged as an error', async () => {
    const res = await rawExchange(
      broker.port,
      'GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n\r\n',
    );
    assert.equal(res.status, 400);
    assert.match(res.body, /Bad Upgrade header/);
    assert.deepEqual(
      broker.logLines().filter((l) => Number(l['level']) >= 50),
      [],
    );
  });

  it('the 408 for a slow head says it was too slow', async () => {
    const res = await rawExchange(broker.port, 'GET /echo HTTP/1.1\r\nHost: x\r\n', 5000);
    assert.equal(res.status, 408);
    assert.match(res.body, /did not arrive within 500 ms/);
  });

  it('counts handshakes by outcome and status in /metrics', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
    assert.match(metrics, /broker_handshakes_total\{outcome="rejected",status="403",endpoint="\/echo"\} \d+/);
    assert.match(metrics, /broker_handshakes_total\{outcome="accepted",status="101",endpoint="\/echo"\} \d+/);
  });
});
