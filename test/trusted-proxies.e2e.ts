import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ocpp16Module, OcppRepositories } from '#broker/protocols/ocpp16';
import request from 'supertest';
import WebSocket from 'ws';
import { OCPP_ENDPOINT } from './support/ocpp.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { opened, refusedStatus } from './support/ws-helpers.js';

const PER_ADDRESS = 3;

/** A WebSocket from `from` (a loopback address) with the given headers; resolves open or the refusal's status. */
async function attempt(
  url: string,
  headers: Record<string, string>,
  from = '127.0.0.1',
  protocol = 'echo.v1',
): Promise<{ ws: WebSocket | null; status: number }> {
  const ws = new WebSocket(url, protocol, { headers, localAddress: from });
  const outcome = await Promise.race([opened(ws).then(() => 101), refusedStatus(ws).catch(() => 0)]);
  return { ws: outcome === 101 ? ws : null, status: outcome };
}

describe('behind a trusted proxy (http.trustedProxies: 127.0.0.1)', () => {
  let broker: TestBroker;
  const open: WebSocket[] = [];

  before(async () => {
    broker = await startTestBroker({
      http: { trustedProxies: ['127.0.0.1'] },
      limits: { maxConnectionsPerAddress: PER_ADDRESS },
      endpoints: [{ path: '/echo', subprotocols: ['echo.v1'], defaultModule: 'echo.v1' }],
    });
  });
  after(async () => {
    for (const ws of open) ws.terminate();
    await broker.close();
  });

  it('300 clients from 300 forwarded addresses all connect, while one address is still held to the limit', async () => {
    for (let i = 0; i < 300; i++) {
      const client = `198.51.${100 + Math.floor(i / 200)}.${(i % 200) + 1}`;
      const { ws, status } = await attempt(`${broker.url}/echo`, { 'X-Forwarded-For': client });
      assert.equal(status, 101, `client ${client}`);
      open.push(ws as WebSocket);
    }
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS + 1; i++) {
      const { ws, status } = await attempt(`${broker.url}/echo`, { Forwarded: 'for=203.0.113.9;proto=http' });
      statuses.push(status);
      if (ws) open.push(ws);
    }
    assert.deepEqual(statuses, [101, 101, 101, 429]);
  });

  it('the log and the admin connection list name the forwarded client, not the proxy', async () => {
    const lines = broker.logLines().filter((line) => line['status'] === 101);
    assert.ok(lines.some((line) => line['client'] === '198.51.100.1'));
    assert.ok(!lines.some((line) => line['client'] === '127.0.0.1'));
    const listed = await request(broker.app.getHttpServer())
      .get('/admin/v1/connections?limit=1000')
      .expect(200);
    const addresses = new Set((listed.body as { address: string }[]).map((c) => c.address));
    assert.ok(addresses.has('203.0.113.9'), [...addresses].slice(0, 5).join(' '));
    assert.ok(!addresses.has('127.0.0.1'));
  });

  it('from a peer that is not trusted (127.0.0.2) the headers are ignored: a spoofed one never raises the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS + 1; i++) {
      const { ws, status } = await attempt(
        `${broker.url}/echo`,
        { 'X-Forwarded-For': `192.0.2.${i + 1}` },
        '127.0.0.2',
      );
      statuses.push(status);
      if (ws) open.push(ws);
    }
    assert.deepEqual(statuses, [101, 101, 101, 429]);
  });

  it('same-origin uses the host and scheme the proxy reports: a page served through it passes', async () => {
    const through = { Origin: 'https://broker.example', 'X-Forwarded-For': '192.0.2.200' };
    const withHost = await attempt(`${broker.url}/echo`, {
      ...through,
      'X-Forwarded-Host': 'broker.example',
      'X-Forwarded-Proto': 'https',
    });
    assert.equal(withHost.status, 101);
    withHost.ws?.close();
    assert.equal(
      (await attempt(`${broker.url}/echo`, through)).status,
      403,
      'without them the Host is the proxy’s',
    );
    const spoofed = await attempt(
      `${broker.url}/echo`,
      { ...through, 'X-Forwarded-Host': 'broker.example', 'X-Forwarded-Proto': 'https' },
      '127.0.0.3',
    );
    assert.equal(spoofed.status, 403, 'an untrusted peer cannot claim the origin');
  });
});

describe('OCPP security profile 2 behind a TLS-terminating trusted proxy', () => {
  let broker: TestBroker;
  const KEY = 'key-0123456789abcdef';
  const basic = { Authorization: `Basic ${Buffer.from(`CP-px:${KEY}`).toString('base64')}` };

  before(async () => {
    broker = await startTestBroker(
      {
        http: { trustedProxies: ['127.0.0.1'] },
        endpoints: [OCPP_ENDPOINT],
        ocpp: { allowUnknownChargePoints: false, securityProfile: 2 },
      },
      [Ocpp16Module],
    );
    await broker.app
      .get(OcppRepositories)
      .chargePoints.create({ identity: 'CP-px', allowed: true, password: KEY }, 'test');
  });
  after(() => broker.close());

  it('X-Forwarded-Proto: https from the proxy counts as wss; the same claim from another peer does not', async () => {
    const url = `${broker.url}/ocpp/CP-px`;
    const through = await attempt(url, { ...basic, 'X-Forwarded-Proto': 'https' }, '127.0.0.1', 'ocpp1.6');
    assert.equal(through.status, 101);
    through.ws?.close();
    assert.equal((await attempt(url, basic, '127.0.0.1', 'ocpp1.6')).status, 403);
    assert.equal(
      (await attempt(url, { ...basic, 'X-Forwarded-Proto': 'https' }, '127.0.0.2', 'ocpp1.6')).status,
      403,
    );
  });
});
