import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import WebSocket from 'ws';
import { IdentityProvider, signingKey, type SigningKey } from './support/identity-provider.js';
import { rawExchange, upgradeRequest } from './support/raw-http.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { waitFor } from './support/ws-helpers.js';

const SECURE = {
  path: '/secure',
  subprotocols: ['echo.v1'],
  defaultModule: 'echo.v1',
  auth: { mode: 'required' },
};

/** The handshake's status with `token` (101 when accepted; the connection is closed again). */
function statusWith(broker: TestBroker, token: string): Promise<number> {
  const ws = new WebSocket(`${broker.url}/secure?token=${token}`, 'echo.v1');
  return new Promise<number>((resolve, reject) => {
    ws.once('open', () => resolve(101));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', reject);
  }).finally(() => ws.terminate());
}

/** The broker's metric line for `name` (with its labels), as /metrics shows it. */
async function metric(broker: TestBroker, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${broker.port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('an identity provider by OpenID Connect discovery: keys that rotate', () => {
  let provider: IdentityProvider;
  let broker: TestBroker;
  let first: SigningKey;

  before(async () => {
    provider = await IdentityProvider.start();
    first = await signingKey('first');
    provider.published = [first];
    provider.maxAgeSec = 3600;
    broker = await startTestBroker({
      endpoints: [SECURE],
      jwt: { discovery: true, issuer: provider.issuer, jwks: { refreshMinSec: 1 } },
    });
  });
  after(async () => {
    await broker?.close();
    await provider?.close();
  });

  it("accepts a token signed with the provider's key, read through its discovery document at boot", async () => {
    assert.equal(provider.requests.discovery, 1);
    assert.equal(provider.requests.jwks, 1);
    assert.equal(await statusWith(broker, await provider.sign(first)), 101);
    assert.equal(provider.requests.jwks, 1, 'the keys are cached for their max-age');
    assert.equal(await metric(broker, 'broker_jwks_keys'), 1);
  });

  it('a new key is taken at once, the old one holds until the provider drops it, then its tokens fail', async () => {
    const oldToken = await provider.sign(first, 'old-holder');
    assert.equal(await statusWith(broker, oldToken), 101);
    const second = await signingKey('second');
    provider.published = [first, second];
    // From now on its answers say max-age=0 (held to refreshMinSec, 1 s, by the broker).
    provider.maxAgeSec = 0;
    // An unknown kid fetches again, once refreshMinSec (1 s) has passed since the last fetch.
    const fetched = provider.requests.jwks;
    const since = Date.now();
    await waitFor(() => Date.now() - since > 1100);
    assert.equal(
      await statusWith(broker, await provider.sign(second)),
      101,
      'the new key at its first token',
    );
    assert.equal(provider.requests.jwks, fetched + 1);
    assert.equal(await statusWith(broker, oldToken), 101, 'the old key still published');

    // The provider drops the old key; the set the broker has is stale 1 s after it was fetched.
    provider.published = [second];
    // The stale set is used once more while the new one comes, then the old key's tokens are refused,
    // the one verified and cached before included.
    await waitFor(async () => (await statusWith(broker, oldToken)) === 401, 10_000);
    assert.equal(await statusWith(broker, await provider.sign(second)), 101);
  });

  it('a flood of tokens with unknown kids costs the provider at most one fetch per refreshMinSec', async () => {
    const forger = await signingKey('forger');
    const before = provider.requests.jwks;
    const started = Date.now();
    for (let i = 0; i < 150; i++) {
      const token = await provider.sign(forger, 'mallory', `kid-${i}-${Math.random()}`);
      assert.equal(await statusWith(broker, token), 401);
    }
    const seconds = (Date.now() - started) / 1000;
    const fetches = provider.requests.jwks - before;
    assert.ok(
      fetches <= Math.ceil(seconds) + 1,
      `${fetches} fetches in ${seconds.toFixed(1)} s of 150 unknown kids`,
    );
  });

  it('the provider down: the keys it gave are kept, stale or not, and its failures are counted', async () => {
    const second = provider.published[0] as SigningKey;
    const token = await provider.sign(second, 'while-down');
    provider.down = true;
    const failed = await metric(broker, 'broker_jwks_fetches_total{outcome="failed"}');
    const since = Date.now();
    await waitFor(() => Date.now() - since > 1100);
    assert.equal(await statusWith(broker, token), 101);
    await waitFor(async () => (await metric(broker, 'broker_jwks_fetches_total{outcome="failed"}')) > failed);
    assert.equal(await statusWith(broker, await provider.sign(second, 'again')), 101);
    // Ready all the same (every node shares the provider, and the keys still verify), with the detail.
    const ready = await fetch(`http://127.0.0.1:${broker.port}/health/ready`);
    const body = (await ready.json()) as { details: { jwks: { keys: number; lastError: string | null } } };
    assert.equal(ready.status, 200);
    assert.equal(body.details.jwks.keys, 1);
    assert.match(String(body.details.jwks.lastError), /answered 503/);
    provider.down = false;
  });
});

describe('an identity provider down when the broker starts', () => {
  let provider: IdentityProvider;
  let broker: TestBroker;
  let key: SigningKey;

  before(async () => {
    provider = await IdentityProvider.start();
    key = await signingKey('k1');
    provider.published = [key];
    provider.down = true;
    broker = await startTestBroker({
      endpoints: [SECURE],
      jwt: { jwksUrl: provider.jwksUrl, issuer: provider.issuer, jwks: { refreshMinSec: 1 } },
    });
  });
  after(async () => {
    await broker?.close();
    await provider?.close();
  });

  it('refuses with 503 and Retry-After, saying why, and accepts once the provider answers', async () => {
    const token = await provider.sign(key);
    const response = await rawExchange(
      broker.port,
      upgradeRequest(`/secure?token=${token}`, { 'Sec-WebSocket-Protocol': 'echo.v1' }),
    );
    assert.equal(response.status, 503);
    assert.ok(response.headers['retry-after'] !== undefined, JSON.stringify(response.headers));
    assert.match(response.body, /identity provider's keys are not available \(.* answered 503\)/);
    const asked = provider.requests.jwks;
    // Refused again without asking the provider again within refreshMinSec.
    for (let i = 0; i < 20; i++) assert.equal(await statusWith(broker, token), 503);
    assert.ok(
      provider.requests.jwks <= asked + 1,
      `${provider.requests.jwks - asked} fetches for 20 handshakes`,
    );

    provider.down = false;
    await waitFor(async () => (await statusWith(broker, token)) === 101, 10_000);
  });
});

describe('an identity provider that answers wrongly: its keys are not taken', () => {
  let provider: IdentityProvider;
  let key: SigningKey;
  const brokers: TestBroker[] = [];

  before(async () => {
    provider = await IdentityProvider.start();
    key = await signingKey('k1');
    provider.published = [key];
  });
  after(async () => {
    for (const broker of brokers) await broker.close();
    await provider?.close();
  });

  async function refusal(jwt: Record<string, unknown>): Promise<{ status: number; body: string }> {
    const broker = await startTestBroker({ endpoints: [SECURE], jwt });
    brokers.push(broker);
    const token = await provider.sign(key);
    const request = upgradeRequest(`/secure?token=${token}`, { 'Sec-WebSocket-Protocol': 'echo.v1' });
    return rawExchange(broker.port, request);
  }

  it('a discovery document naming another issuer: 503 saying so (OpenID Connect Discovery 4.3)', async () => {
    provider.claimedIssuer = 'https://attacker.example/realms/test';
    try {
      const response = await refusal({ discovery: true, issuer: provider.issuer });
      assert.equal(response.status, 503);
      assert.match(response.body, /the discovery document names another issuer/);
    } finally {
      provider.claimedIssuer = null;
    }
  });

  it('a key set larger than jwks.maxBytes is cut off there: 503 saying so', async () => {
    provider.padding = 64 * 1024;
    try {
      const response = await refusal({ jwksUrl: provider.jwksUrl, jwks: { maxBytes: 16 * 1024 } });
      assert.equal(response.status, 503);
      assert.match(response.body, /answered with more than 16384 bytes/);
    } finally {
      provider.padding = 0;
    }
  });
});
