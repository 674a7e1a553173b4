import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OcppRepositories } from '#broker/protocols/ocpp16';
import WebSocket from 'ws';
import { DEFAULT_CONFIG } from '../src/default-config.js';
import { request, transportClient } from './support/graphql-clients.js';
import { connect, nextEvent } from './support/mqtt-helpers.js';
import { BOOT, chargePoint, counter } from './support/ocpp.js';
import { startHaproxy, startNginx, type ProxyOptions, type RunningProxy } from './support/proxies.js';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { opened, refusedStatus } from './support/ws-helpers.js';

const KEY = 'key-0123456789abcdef';
const PER_ADDRESS = 256;

/** Opens a WebSocket from `from`; resolves 101 and the socket, or the refusal's status. */
async function attempt(
  url: string,
  options: { from?: string; headers?: Record<string, string>; protocol?: string } = {},
): Promise<{ ws: WebSocket; status: number }> {
  const ws = new WebSocket(url, options.protocol ?? 'chat.v1', {
    localAddress: options.from ?? '127.0.0.1',
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  });
  const status = await Promise.race([opened(ws).then(() => 101), refusedStatus(ws).catch(() => 0)]);
  return { ws, status };
}

/** The broker as npm start composes it, believing the proxy on loopback, pinging every 500 ms. */
function startBroker(): Promise<TestBroker> {
  return startDefaultBroker({
    http: { trustedProxies: ['127.0.0.1'] },
    endpoints: [
      ...DEFAULT_CONFIG.endpoints.map((endpoint) => ({ ...endpoint, pingIntervalMs: 500 })),
      // The control for the idle-timeout test: the same module without the broker's pings.
      { path: '/mqtt-quiet', subprotocols: ['mqtt'], defaultModule: 'mqtt', pingIntervalMs: 0 },
    ],
    ocpp: { allowUnknownChargePoints: false, securityProfile: 2 },
  });
}

const PROXIES: readonly [string, (options: ProxyOptions) => Promise<RunningProxy>][] = [
  ['nginx', startNginx],
  ['HAProxy', startHaproxy],
];

for (const [name, startProxy] of PROXIES) {
  describe(`behind ${name}, with the shipped configuration`, () => {
    let broker: TestBroker;
    let second: TestBroker;
    let proxy: RunningProxy;
    let spread: RunningProxy;

    before(async () => {
      broker = await startBroker();
      second = await startBroker();
      await broker.app
        .get(OcppRepositories)
        .chargePoints.create({ identity: 'CP-px', allowed: true, password: KEY }, 'test');
      proxy = await startProxy({ upstreams: [broker.port], idleTimeoutSec: 2 });
      spread = await startProxy({ upstreams: [broker.port, second.port] });
    });
    after(async () => {
      await Promise.all([proxy?.stop(), spread?.stop()]);
      await Promise.all([broker?.close(), second?.close()]);
    });

    it('every module answers through it: MQTT, GraphQL, chat, and OCPP over wss ended at the proxy', async () => {
      const mqtt = await connect({ url: proxy.ws });
      await mqtt.subscribeAsync('px/t', { qos: 1 });
      const message = nextEvent<[string, Buffer]>(mqtt, 'message');
      await mqtt.publishAsync('px/t', 'through', { qos: 1 });
      assert.equal((await message)[1].toString(), 'through');
      await mqtt.endAsync();

      const graphql = transportClient(`${proxy.ws}/graphql`);
      const result = await request(graphql, '{ status { connections } }');
      assert.equal(typeof (result.data?.['status'] as { connections: number }).connections, 'number');
      await graphql.dispose();

      const chat = await attempt(`${proxy.ws}/chat`);
      assert.equal(chat.status, 101);
      chat.ws.close();

      // Security profile 2 is "wss only": TLS ended at the trusted proxy counts, plain ws does not.
      const station = chargePoint(proxy.wss, 'CP-px', {
        password: KEY,
        wsOpts: { rejectUnauthorized: false },
      });
      await station.connect();
      assert.equal(((await station.call('BootNotification', BOOT)) as { status: string }).status, 'Accepted');
      await station.close();
      const plain = await attempt(`${proxy.ws}/ocpp/CP-px`, {
        protocol: 'ocpp1.6',
        headers: { Authorization: `Basic ${Buffer.from(`CP-px:${KEY}`).toString('base64')}` },
      });
      assert.equal(plain.status, 403);
    });

    it('300 clients from 300 source addresses all connect; 300 from one address stop at the per-address limit', async () => {
      const sockets: WebSocket[] = [];
      try {
        for (let i = 0; i < 300; i++) {
          const from = `127.0.${1 + Math.floor(i / 200)}.${(i % 200) + 1}`;
          const { ws, status } = await attempt(`${proxy.ws}/chat`, { from });
          assert.equal(status, 101, `from ${from}`);
          sockets.push(ws);
        }
        const statuses: number[] = [];
        for (let i = 0; i < 300; i++) {
          const { ws, status } = await attempt(`${proxy.ws}/chat`, { from: '127.0.9.9' });
          statuses.push(status);
          if (status === 101) sockets.push(ws);
        }
        assert.equal(statuses.filter((s) => s === 101).length, PER_ADDRESS);
        assert.ok(
          statuses.slice(PER_ADDRESS).every((s) => s === 429),
          String(new Set(statuses)),
        );
      } finally {
        for (const ws of sockets) ws.terminate();
      }
    });

    it('a page served through the proxy passes the same-origin check (its Origin is the proxy’s)', async () => {
      const page = await attempt(`${proxy.ws}/chat`, { headers: { Origin: proxy.http } });
      assert.equal(page.status, 101);
      page.ws.close();
      const other = await attempt(`${proxy.ws}/chat`, { headers: { Origin: 'http://elsewhere.example' } });
      assert.equal(other.status, 403);
    });

    it('an idle WebSocket outlives the proxy’s 2 s idle timeout thanks to the broker’s pings (and dies without them)', async () => {
      const pinged = await connect({ url: proxy.ws }, { keepalive: 0 });
      const quiet = await connect({ url: proxy.ws }, { keepalive: 0, path: '/mqtt-quiet' });
      const quietClosed = nextEvent(quiet, 'close');
      await new Promise((resolve) => setTimeout(resolve, 4000));
      await quietClosed;
      assert.equal(pinged.connected, true);
      await pinged.subscribeAsync('px/idle', { qos: 1 });
      const message = nextEvent<[string, Buffer]>(pinged, 'message');
      await pinged.publishAsync('px/idle', 'still here', { qos: 1 });
      assert.equal((await message)[1].toString(), 'still here');
      await pinged.endAsync();
      quiet.end(true);
    });

    it('in front of two nodes, connections land on both (no stickiness needed)', async () => {
      const sockets: WebSocket[] = [];
      for (let i = 0; i < 10; i++) {
        const { ws, status } = await attempt(`${spread.ws}/chat`);
        assert.equal(status, 101);
        sockets.push(ws);
      }
      const open = async (node: TestBroker) =>
        ((await (await fetch(`http://127.0.0.1:${node.port}/health`)).json()) as { connections: number })
          .connections;
      assert.ok((await open(broker)) > 0 && (await open(second)) > 0);
      for (const ws of sockets) ws.close();
    });
  });
}

describe('nginx configured without the upgrade headers', () => {
  let broker: TestBroker;
  let proxy: RunningProxy;
  before(async () => {
    broker = await startBroker();
    proxy = await startNginx({ upstreams: [broker.port], withoutUpgradeHeaders: true });
  });
  after(async () => {
    await proxy?.stop();
    await broker?.close();
  });

  it('the client gets the broker’s plain-GET diagnostic, and the metric counts it', async () => {
    const before = await counter(
      `http://127.0.0.1:${broker.port}`,
      'broker_upgrade_headers_missing_total',
      'endpoint="/chat"',
    );
    const ws = new WebSocket(`${proxy.ws}/chat`, 'chat.v1');
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.once('open', () => reject(new Error('the handshake was accepted')));
      ws.on('error', () => undefined);
    });
    assert.equal(answer.status, 200);
    assert.match(answer.body, /proxy between you and the broker probably removed them/);
    const after = await counter(
      `http://127.0.0.1:${broker.port}`,
      'broker_upgrade_headers_missing_total',
      'endpoint="/chat"',
    );
    assert.equal(after, before + 1);
  });
});
