import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TOPIC_BUS, type TopicBus } from '#broker/bus';
import { Ocpp16Module, OcppRepositories, type ChargePointsRepository } from '#broker/protocols/ocpp16';
import request from 'supertest';
import WebSocket from 'ws';
import { selfSignedCertificate } from './support/self-signed.js';
import { BOOT, chargePoint, OCPP_ENDPOINT, refusal } from './support/ocpp.js';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { closed, opened, waitFor } from './support/ws-helpers.js';

const KEY = 'key-0123456789abcdef';
const SECURE = { path: '/secure/:chargePointId', subprotocols: ['ocpp1.6'], defaultModule: 'ocpp1.6' };

function basic(user: string, password: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
}

describe('ocpp1.6 connection rules', () => {
  let broker: TestBroker;
  let chargePoints: ChargePointsRepository;

  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [OCPP_ENDPOINT, SECURE],
        ocpp: { endpoints: [{ path: SECURE.path, allowUnknownChargePoints: false, securityProfile: 1 }] },
      },
      [Ocpp16Module],
    );
    ({ chargePoints } = broker.app.get(OcppRepositories));
    await chargePoints.create({ identity: 'CP:01', allowed: true, password: KEY }, 'test');
    await chargePoints.create({ identity: 'CP-nokey', allowed: true, password: null }, 'test');
    await chargePoints.create({ identity: 'CP-banned', allowed: false, password: null }, 'test');
  });
  after(() => broker.close());

  it('the start-up log says unknown charge points may connect on the default endpoint', () => {
    const line = broker
      .logLines()
      .find((l) => l['endpoint'] === OCPP_ENDPOINT.path && l['allowUnknownChargePoints']);
    assert.ok(line, 'a start-up line names the endpoint');
    assert.match(String(line['msg']), /not in the store may connect/);
  });

  it('selects ocpp1.6 among several offered, identity percent-decoded from the last segment', async () => {
    const ws = new WebSocket(`${broker.url}/ocpp/CP%2B7`, ['ocpp1.5', 'ocpp1.6']);
    await opened(ws);
    assert.equal(ws.protocol, 'ocpp1.6');
    ws.send(JSON.stringify([2, 'b', 'BootNotification', BOOT]));
    await waitFor(async () => (await broker.app.get(OcppRepositories).stations.get('CP+7')) !== null);
    ws.close();
  });

  it('without ocpp1.6 offered: 101 without Sec-WebSocket-Protocol, then closed at once with a reason', async () => {
    const ws = new WebSocket(`${broker.url}/ocpp/CP-noproto`);
    const { code, reason } = await closed(ws);
    assert.equal(ws.protocol, '');
    assert.equal(code, 1002);
    assert.match(reason, /ocpp1\.6/);
    // A client that offers only other versions: the raw answer shows the omitted header and the close frame.
    const raw = await rawExchange(
      broker.port,
      upgradeRequest('/ocpp/CP-noproto', { 'Sec-WebSocket-Protocol': 'ocpp2.0.1, ocpp1.5' }),
    );
    assert.equal(raw.status, 101);
    assert.equal(raw.headers['sec-websocket-protocol'], undefined);
    const frame = Buffer.from(raw.body, 'latin1');
    assert.equal(frame[0], 0x88, 'a close frame follows the 101');
    assert.equal(frame.readUInt16BE(2), 1002);
  });

  it('an unknown charge point: accepted where the endpoint allows it, 404 where it does not', async () => {
    const open = chargePoint(broker.url, 'CP-stranger');
    await open.connect();
    await open.close();
    const refused = await refusal(`${broker.url}/secure/CP-stranger`, basic('CP-stranger', KEY));
    assert.equal(refused.status, 404);
    assert.match(refused.body, /CP-stranger/);
  });

  it('an identity the store could never hold is 400', async () => {
    assert.equal((await refusal(`${broker.url}/ocpp/${'x'.repeat(49)}`)).status, 400);
    assert.equal((await refusal(`${broker.url}/ocpp/a%20b`)).status, 400);
    assert.equal((await refusal(`${broker.url}/ocpp/a%2Fb`)).status, 400);
  });

  it('a charge point that is not allowed is 403', async () => {
    assert.equal((await refusal(`${broker.url}/ocpp/CP-banned`)).status, 403);
  });

  it('Basic auth (profile 1): the stored key, with a colon in the identity, opens a strict RPCClient session', async () => {
    const client = chargePoint(broker.url.replace(/\/$/, ''), 'CP:01', {
      endpoint: `${broker.url}/secure`,
      password: KEY,
    });
    await client.connect();
    const boot = (await client.call('BootNotification', BOOT)) as { status: string };
    assert.equal(boot.status, 'Accepted');
    await client.close();
  });

  it('Basic auth failures are 401 with WWW-Authenticate: Basic, and never log the password', async () => {
    const url = `${broker.url}/secure/CP%3A01`;
    for (const headers of [
      {},
      basic('CP:01', `${KEY}x`),
      basic('CP:02', KEY),
      { Authorization: 'Basic !!!' },
    ]) {
      const refused = await refusal(url, headers);
      assert.equal(refused.status, 401, JSON.stringify(headers));
      assert.match(String(refused.headers['www-authenticate']), /^Basic realm="\/secure\/:chargePointId"/);
    }
    assert.equal(
      (await refusal(`${broker.url}/secure/CP-nokey`, basic('CP-nokey', ''))).status,
      401,
      'profile 1 needs a stored key',
    );
    const rpc = chargePoint(broker.url, 'CP:01', {
      endpoint: `${broker.url}/secure`,
      password: 'wrong-key-0123456789',
    });
    await assert.rejects(rpc.connect());
    assert.doesNotMatch(broker.logText(), new RegExp(`${KEY}|wrong-key`));
  });

  it('a stored key is required on profile 0 too', async () => {
    assert.equal((await refusal(`${broker.url}/ocpp/CP%3A01`)).status, 401);
    const client = chargePoint(broker.url, 'CP:01', { password: KEY });
    await client.connect();
    await client.close();
  });

  it('a second connection with the same identity replaces the first (close 4000); the new one works', async () => {
    const disconnects: { replaced: boolean }[] = [];
    const subscription = broker.app
      .get<TopicBus>(TOPIC_BUS)
      .subscribe('ocpp/CP-twin/Disconnected', (m) =>
        disconnects.push(JSON.parse(Buffer.from(m.payload).toString()) as { replaced: boolean }),
      );
    const first = chargePoint(broker.url, 'CP-twin');
    await first.connect();
    await first.call('BootNotification', BOOT);
    const firstClosed = new Promise<{ code: number; reason: string }>((resolve) =>
      first.once('close', resolve),
    );
    const second = chargePoint(broker.url, 'CP-twin');
    await second.connect();
    const { code, reason } = await firstClosed;
    assert.equal(code, 4000);
    assert.match(reason, /replaced/);
    const beat = (await second.call('Heartbeat', {})) as { currentTime: string };
    assert.ok(beat.currentTime, 'the acceptance of the earlier boot carries over to the new connection');
    const state = await request(broker.url.replace(/^ws/, 'http')).get(
      '/admin/v1/charge-points/CP-twin/state',
    );
    assert.equal(state.body.connected, true);
    await second.close();
    await waitFor(() => disconnects.length === 2);
    assert.deepEqual(
      disconnects.map((d) => d.replaced),
      [true, false],
      'only the last disconnect means the charge point is offline',
    );
    subscription.unsubscribe();
  });

  it('reconnect: a charge point that drops comes back and carries on without a new boot', async () => {
    const client = chargePoint(broker.url, 'CP-flaky', {
      reconnect: true,
      backoff: { initialDelay: 10, maxDelay: 50, factor: 2, randomisationFactor: 0 },
    });
    await client.connect();
    await client.call('BootNotification', BOOT);
    const reconnected = new Promise<void>((resolve) => client.once('open', () => resolve()));
    // The server side drops the socket: what a network failure looks like to the charge point.
    const http = request(broker.url.replace(/^ws/, 'http'));
    const connections = await http.get('/admin/v1/connections?subprotocol=ocpp1.6&limit=1000');
    const mine = (connections.body as { id: string; principal: string | null }[]).map((c) => c.id);
    for (const id of mine) await http.delete(`/admin/v1/connections/${id}?code=1001&reason=maintenance`);
    await reconnected;
    const beat = (await client.call('Heartbeat', {})) as { currentTime: string };
    assert.ok(beat.currentTime);
    await client.close();
  });
});

describe('ocpp1.6 configuration', () => {
  it('an override for a path no ocpp1.6 endpoint has stops the boot, naming the setting', async () => {
    await assert.rejects(
      startTestBroker(
        {
          endpoints: [OCPP_ENDPOINT],
          ocpp: { endpoints: [{ path: '/ocpp/:id', allowUnknownChargePoints: false }] },
        },
        [Ocpp16Module],
      ),
      /ocpp\.endpoints\.0\.path: no endpoint \/ocpp\/:id hosts ocpp1\.6/,
    );
  });
});

describe('ocpp1.6 security profile 2', () => {
  let broker: TestBroker;

  before(async () => {
    const { certFile, keyFile } = selfSignedCertificate();
    broker = await startTestBroker(
      {
        tls: { certFile, keyFile },
        endpoints: [OCPP_ENDPOINT],
        ocpp: { allowUnknownChargePoints: false, securityProfile: 2 },
      },
      [Ocpp16Module],
    );
    await broker.app
      .get(OcppRepositories)
      .chargePoints.create({ identity: 'CP-tls', allowed: true, password: KEY }, 'test');
  });
  after(() => broker.close());

  it('Basic auth over wss:// opens the session', async () => {
    const client = chargePoint(broker.url, 'CP-tls', {
      password: KEY,
      wsOpts: { rejectUnauthorized: false },
    });
    await client.connect();
    assert.equal(((await client.call('BootNotification', BOOT)) as { status: string }).status, 'Accepted');
    await client.close();
  });
});

describe('ocpp1.6 security profile 2 without TLS', () => {
  it('refuses plain ws:// with 403', async () => {
    const broker = await startTestBroker(
      { endpoints: [OCPP_ENDPOINT], ocpp: { allowUnknownChargePoints: false, securityProfile: 2 } },
      [Ocpp16Module],
    );
    try {
      await broker.app
        .get(OcppRepositories)
        .chargePoints.create({ identity: 'CP-plain', allowed: true, password: KEY }, 'test');
      const refused = await refusal(`${broker.url}/ocpp/CP-plain`, basic('CP-plain', KEY));
      assert.equal(refused.status, 403);
      assert.match(refused.body, /wss/);
    } finally {
      await broker.close();
    }
  });
});
