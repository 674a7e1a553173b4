import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type HandshakeCheckContext } from '#broker/gateway';
import { type ClientCertificate } from '#broker/handshake';
import { BrokerStore } from '#broker/store';
import { type OcppSettings } from './ocpp-settings.js';
import { checkChargePoint, identityOf } from './ocpp16.check.js';
import { type ChargePointsRepository } from './store/charge-points.repository.js';
import { OcppRepositories } from './store/ocpp.repositories.js';

const KEY = 'key-0123456789abcdef';

const settings = (overrides: Partial<OcppSettings> = {}): OcppSettings => ({
  allowUnknownChargePoints: false,
  securityProfile: 0,
  certificateOrganization: undefined,
  bootPolicy: 'accept',
  heartbeatIntervalSec: 300,
  bootRetryIntervalSec: 60,
  callTimeoutMs: 30_000,
  maxQueuedCalls: 16,
  ...overrides,
});

function request(
  identity: string,
  options: { password?: string; secure?: boolean; certificate?: ClientCertificate } = {},
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
    clientCertificate: options.certificate ?? null,
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
  let chargePoints: ChargePointsRepository;

  before(async () => {
    store = await BrokerStore.open({ sqlitePath: ':memory:' });
    ({ chargePoints } = await OcppRepositories.open(store));
    await chargePoints.create({ identity: 'CP:keyed', allowed: true, password: KEY }, 'spec');
    await chargePoints.create({ identity: 'CP-open', allowed: true, password: null }, 'spec');
    await chargePoints.create({ identity: 'CP-off', allowed: false, password: null }, 'spec');
  });
  after(() => store.close());

  const status = async (ctx: HandshakeCheckContext, s: OcppSettings) =>
    (await checkChargePoint(ctx, s, chargePoints))?.status ?? 'ok';

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
      chargePoints,
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

  it('profile 3: a verified certificate naming the identity, and no Basic auth even where a key is stored', async () => {
    const p3 = settings({ securityProfile: 3 });
    const named = (commonName: string | null): ClientCertificate => ({
      authorized: true,
      error: null,
      commonName,
      organization: null,
      subjectAltNames: [],
    });
    assert.equal(
      await status(request('CP:keyed', { secure: true, certificate: named('CP:keyed') }), p3),
      'ok',
    );
    assert.equal(await status(request('CP:keyed', { secure: true }), p3), 403);
    const other = await checkChargePoint(
      request('CP:keyed', { secure: true, certificate: named('CP-open') }),
      p3,
      chargePoints,
    );
    assert.equal(other?.status, 403);
    assert.match(other?.detail ?? '', /names "CP-open", not CP:keyed/);
    assert.equal(await status(request('CP:keyed', { secure: true, certificate: named(null) }), p3), 403);
    const expired = await checkChargePoint(
      request('CP:keyed', {
        secure: true,
        certificate: {
          authorized: false,
          error: 'CERT_HAS_EXPIRED',
          commonName: 'CP:keyed',
          organization: null,
          subjectAltNames: [],
        },
      }),
      p3,
      chargePoints,
    );
    assert.match(expired?.detail ?? '', /expired \(CERT_HAS_EXPIRED\)/);
    assert.equal(await status(request('CP-off', { secure: true, certificate: named('CP-off') }), p3), 403);
    assert.equal(await status(request('CP-new', { secure: true, certificate: named('CP-new') }), p3), 404);
  });

  it("profile 3 with certificateOrganization: the Organization must be the operator's, quoted safely", async () => {
    const p3 = settings({ securityProfile: 3, certificateOrganization: 'Acme' });
    const certificate = (organization: string | null): ClientCertificate => ({
      authorized: true,
      error: null,
      commonName: 'CP-open',
      organization,
      subjectAltNames: [],
    });
    assert.equal(
      await status(request('CP-open', { secure: true, certificate: certificate('Acme') }), p3),
      'ok',
    );
    assert.equal(await status(request('CP-open', { secure: true, certificate: certificate(null) }), p3), 403);
    const other = await checkChargePoint(
      request('CP-open', { secure: true, certificate: certificate('Ev\u202eil\u200b') }),
      p3,
      chargePoints,
    );
    assert.equal(other?.status, 403);
    assert.equal(
      other?.detail,
      'The client certificate\'s Organization is "Ev\\u202eil\\u200b", not "Acme".',
    );
  });
});
