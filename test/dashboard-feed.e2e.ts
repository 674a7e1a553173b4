import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { startDefaultBroker, type TestBroker } from './support/test-broker.js';
import { type OpenFeed, openFeed, snapshotOf } from './support/dashboard-feed.js';
import { refusedStatus, waitFor } from './support/ws-helpers.js';

// The dashboard's page and feed over plain HTTP: what the browser test does not see (headers, the
// feed's limit, what a snapshot leaves out).

const ADMIN = 'feed-admin-token-0123456789abcdef';
const BEARER = { Authorization: `Bearer ${ADMIN}` };

describe('dashboard page and feed', () => {
  let broker: TestBroker;
  let base = '';

  before(async () => {
    broker = await startDefaultBroker({ admin: { tokens: [ADMIN] } });
    base = broker.url.replace(/^ws/, 'http');
  });

  after(() => broker.close());

  it('serves the page with a strict CSP, no inline script, its assets gzipped', async () => {
    const redirect = await fetch(`${base}/dashboard`, { redirect: 'manual' });
    assert.equal(redirect.status, 301);
    assert.equal(redirect.headers.get('location'), 'dashboard/');
    const res = await fetch(`${base}/dashboard/`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      "frame-ancestors 'none'",
    ]) {
      assert.ok(csp.includes(directive), `${directive} in ${csp}`);
    }
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>([\s\S]*?)<\/script>/g)];
    assert.ok(scripts.length > 0);
    for (const [tag, body] of scripts) {
      assert.match(tag, /src="\.\/assets\/[^"]+\.js"/);
      assert.equal(body, '');
    }
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1] ?? '';
    const asset = await fetch(`${base}/dashboard/${script}`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(asset.status, 200);
    assert.equal(asset.headers.get('content-encoding'), 'gzip');
    assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
    assert.equal((await fetch(`${base}/dashboard/assets/..%2F..%2Fpackage.json`)).status, 404);
  });

  it('refuses the feed without the admin credential, as the admin API does', async () => {
    const none = await fetch(`${base}/admin/v1/dashboard/feed`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('content-type') ?? '', /problem\+json/);
    const wrong = await openFeed(base, { Authorization: 'Bearer not-an-admin-token-at-all' });
    assert.equal(wrong.status, 401);
  });

  it('sends snapshots that name refusals without the credentials a client offered', async () => {
    const foreign = new WebSocket(`${broker.url}/chat?token=query-secret-0123456789`, 'chat.v1', {
      origin: 'https://elsewhere.example',
      headers: { Authorization: 'Bearer header-secret-0123456789' },
    });
    assert.equal(await refusedStatus(foreign), 403);
    const feed = await openFeed(base, BEARER);
    assert.equal(feed.status, 200);
    const event = await feed.first;
    feed.close();
    assert.match(event, /^event: snapshot\ndata: /);
    const snapshot = snapshotOf<{
      endpoints: string[];
      refusals: { total: number; latest: { status: number; endpoint: string; title: string }[] };
      modules: Record<string, { title: string; labels: Record<string, string> }>;
      panels: { id: string; columns: { key: string }[]; rows: unknown[] }[];
    }>(event);
    assert.deepEqual(snapshot.endpoints, ['/chat', '/mqtt', '/graphql', '/ws', '/ocpp/:chargePointId']);
    assert.equal(snapshot.refusals.total, 1);
    assert.deepEqual(
      snapshot.refusals.latest.map((r) => [r.status, r.endpoint, r.title]),
      [[403, '/chat', 'Origin not allowed']],
    );
    assert.deepEqual(Object.keys(snapshot.modules).sort(), ['mqtt', 'ocpp1.6', 'wamp.2.json']);
    assert.equal(snapshot.modules['ocpp1.6']?.labels['chargePoints'], 'Charge points connected');
    // The MQTT and OCPP modules' panels, added through the same contract an application's module uses.
    assert.deepEqual(
      snapshot.panels.map((p) => [p.id, p.columns.map((c) => c.key), p.rows.length]),
      [
        ['mqtt-busiest-topics', ['topic', 'rate', 'messages', 'overcount'], 0],
        ['charge-points', ['identity', 'model', 'connectors', 'transactions', 'lastHeartbeat'], 0],
      ],
    );
    for (const secret of ['query-secret', 'header-secret', ADMIN]) assert.ok(!event.includes(secret), secret);
  });

  it("GET /admin/v1/nodes: this node alone, NATS not clustered, its store's backend and last check", async () => {
    assert.equal((await fetch(`${base}/admin/v1/nodes`)).status, 401);
    interface Nodes {
      answered: {
        node: string | null;
        connections: number;
        load: { rssBytes: number };
        nats: { state: string };
        store: { kind: string; working: boolean | null; checkedAgoMs: number | null; lastError: unknown };
        modules: Record<string, Record<string, number>>;
      }[];
      missing: string[];
    }
    const nodes = async (): Promise<Nodes> => {
      const res = await fetch(`${base}/admin/v1/nodes`, { headers: BEARER });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('broker-missing-nodes'), null);
      return (await res.json()) as Nodes;
    };
    // The store's first check starts with the first reading.
    await waitFor(async () => (await nodes()).answered[0]?.store.working === true);
    const { answered, missing } = await nodes();
    assert.deepEqual(missing, []);
    assert.equal(answered.length, 1);
    const [row] = answered;
    assert.equal(row?.node, null);
    assert.deepEqual(row?.nats, { state: 'not clustered' });
    assert.equal(row?.store.kind, 'sqlite');
    assert.equal(row?.store.lastError, null);
    assert.ok((row?.store.checkedAgoMs ?? -1) >= 0);
    assert.ok((row?.load.rssBytes ?? 0) > 0);
    assert.deepEqual(Object.keys(row?.modules ?? {}).sort(), ['mqtt', 'ocpp1.6', 'wamp.2.json']);
    const doc = (await (await fetch(`${base}/admin/openapi.json`, { headers: BEARER })).json()) as {
      paths: Record<string, { get?: { summary?: string } }>;
    };
    assert.match(doc.paths['/admin/v1/nodes']?.get?.summary ?? '', /NATS connection and store/);
  });

  it('holds at most 8 feeds at once, and takes a new one when one leaves', async () => {
    const feeds = await Promise.all(Array.from({ length: 8 }, () => openFeed(base, BEARER)));
    try {
      assert.deepEqual(
        feeds.map((f) => f.status),
        Array(8).fill(200),
      );
      await Promise.all(feeds.map((f) => f.first));
      const ninth = await fetch(`${base}/admin/v1/dashboard/feed`, { headers: BEARER });
      assert.equal(ninth.status, 503);
      assert.match(((await ninth.json()) as { detail: string }).detail, /At most 8 dashboard feeds/);
      feeds.pop()?.close();
      let again: OpenFeed | undefined;
      await waitFor(async () => {
        again?.close();
        again = await openFeed(base, BEARER);
        return again.status === 200;
      });
      again?.close();
    } finally {
      for (const f of feeds) f.close();
    }
  });
});
