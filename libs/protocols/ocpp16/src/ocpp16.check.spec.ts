import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HandshakeCheckContext } from '#broker/gateway';
import { BrokerStore } from '#broker/store';
import { type OcppSettings } from './ocpp-settings.js';
import { checkChargePoint, identityOf } from './ocpp16.check.js';

const KEY = 'key-0123456789abcdef';

const settings = (overrides: Partial<OcppSettings> = {}): OcppSettings => ({
  allowUnknownChargePoints: false,
  securityProfile: 0,
  bootPolicy: 'accept',
  heartbeatIntervalSec: 300,
  bootRetryIntervalSec: 60,
  callTimeoutMs: 30_000,
  maxQueuedCalls: 16,
  ...overrides,
});

function request(
  identity: string,
  options: { password?: string; secure?: boolean } = {},
): HandshakeCheckContext {
  const auth =
    options.password === undefined
      ? []
      : [`Basic ${Buffer.from(`${identity}:${options.password}`).toString('base64')}`];
  return {
    endpoint: '/ocpp/:chargePointId',
    params: { chargePointId: identity },
    principal: null,
    secure: options.secure ?? false,
    header: (name) => (name === 'authorization' ? auth : []),
  };
}

describe('identityOf', () => {
  it('takes chargePointId, else the last parameter; refuses what the store could not hold', () => {
    assert.equal(identityOf({ chargePointId: 'CP:01' }), 'CP:01');
    assert.equal(identityOf({ site: 'a', box: 'CP-9' }), 'CP-9');
    for (const bad of ['', 'a b', 'a/b', 'x'.repeat(49), 'tab\there'])
      assert.equal(identityOf({ chargePointId: bad }), null);
    assert.equal(identityOf({}), null);
  });
});

describe('checkChargePoint', () => {
  let store: BrokerStore;

  before(async () => {
    store = await BrokerStore.open({ sqlitePath: ':memory:' });
    await store.chargePoints.create({ identity: 'CP:keyed', allowed: true, password: KEY }, 'spec');
    await store.chargePoints.create({ identity: 'CP-open', allowed: true, password: null }, 'spec');
    await store.chargePoints.create({ identity: 'CP-off', allowed: false, password: null }, 'spec');
  });
  after(() => store.close());

  const status = async (ctx: HandshakeCheckContext, s: OcppSettings) =>
    (await checkChargePoint(ctx, s, store.chargePoints))?.status ?? 'ok';

  it('unknown charge points: 404, or through where allowed', async () => {
    assert.equal(await status(request('CP-new'), settings()), 404);
    assert.equal(await status(request('CP-new'), settings({ allowUnknownChargePoints: true })), 'ok');
  });

  it('a bad identity is 400, a charge point not allowed 403', async () => {
    assert.equal(await status(request('a b'), settings()), 400);
    assert.equal(await status(request('CP-off'), settings()), 403);
  });

  it('profile 0: open charge points pass, a stored key is still required', async () => {
    assert.equal(await status(request('CP-open'), settings()), 'ok');
    assert.equal(await status(request('CP:keyed'), settings()), 401);
    assert.equal(await status(request('CP:keyed', { password: KEY }), settings()), 'ok');
  });

  it('profile 1: a stored key is required; 401 carries a Basic challenge', async () => {
    const p1 = settings({ securityProfile: 1 });
    const refused = await checkChargePoint(
      request('CP-open', { password: 'anything-at-all-1' }),
      p1,
      store.chargePoints,
    );
    assert.equal(refused?.status, 401);
    assert.match(refused?.headers?.['WWW-Authenticate'] ?? '', /^Basic realm="\/ocpp\/:chargePointId"/);
    assert.equal(await status(request('CP:keyed', { password: `${KEY}!` }), p1), 401);
    assert.equal(await status(request('CP:keyed', { password: KEY }), p1), 'ok');
  });

  it('profile 2: TLS first, then the key', async () => {
    const p2 = settings({ securityProfile: 2 });
    assert.equal(await status(request('CP:keyed', { password: KEY }), p2), 403);
    assert.equal(await status(request('CP:keyed', { password: KEY, secure: true }), p2), 'ok');
  });
});
