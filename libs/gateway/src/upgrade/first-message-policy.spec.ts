import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type PasswordCheck, type StoredTokenCheck } from '#broker/auth';
import { parseConfig } from '#broker/config';
import { type Principal } from '#broker/handshake';
import { BrokerStore } from '#broker/store';
import { SignJWT } from 'jose';
import {
  authenticateFirstMessage,
  type CredentialChecks,
  type FirstMessageCredential,
  type FirstMessageEndpoint,
} from './first-message-policy.js';
import { TokenVerifier } from './token-verifier.js';

// The real parts: the gateway's token verifier (jose, HS256) with the store's API tokens, and the
// store's password check (scrypt) on SQLite.
const SECRET = 'first-message-policy-spec-secret-0123456789';
const MQTT: FirstMessageEndpoint = { mode: 'optional', path: '/mqtt', timeoutMs: 5000 };
const HANDSHAKE: Principal = { subject: 'from-the-handshake', claims: {}, carrier: 'header' };

function jwt(claims: Record<string, unknown> = {}, secret = SECRET, expires: string | number = '5m') {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime(expires)
    .sign(new TextEncoder().encode(secret));
}

function password(username: string, secret: string): FirstMessageCredential {
  return { username, password: Buffer.from(secret) };
}

describe('authenticateFirstMessage (the first-message policy)', () => {
  let store: BrokerStore;
  let checks: CredentialChecks;
  let apiToken: string;

  before(async () => {
    store = await BrokerStore.open({ sqlitePath: ':memory:' });
    const stored: StoredTokenCheck = {
      recognizes: (token) => store.credentials.recognizes(token),
      verify: (token) => store.credentials.verifyToken(token),
    };
    const verifier = new TokenVerifier(
      parseConfig({ jwt: { secret: SECRET }, endpoints: [{ path: '/mqtt', subprotocols: ['mqtt'] }] }),
      stored,
    );
    await verifier.init();
    checks = {
      verifyToken: (token) => verifier.verify(token, 'first-message'),
      passwords: { verifyPassword: (u, p) => store.credentials.verifyPassword(u, p) },
    };
    const base = { expiresAt: null };
    await store.credentials.createPassword(
      { ...base, name: 'dev', username: 'dev-7', password: 'dev-7-pass', scopes: ['mqtt:publish:d/7/#'] },
      'spec',
    );
    await store.credentials.createPassword(
      { ...base, name: 'chat', username: 'chatter', password: 'chat-pass', scopes: ['endpoint:/chat'] },
      'spec',
    );
    apiToken = (await store.credentials.createToken({ ...base, name: 'api', scopes: [] }, 'spec')).token;
  });
  after(() => store.close());

  it('a JWT gives its principal, which replaces the handshake principal', async () => {
    const outcome = await authenticateFirstMessage({ token: await jwt() }, HANDSHAKE, MQTT, checks);
    assert.ok(outcome.ok);
    assert.equal(outcome.principal?.subject, 'alice');
    assert.equal(outcome.principal?.carrier, 'first-message');
  });

  it('a stored API token is checked against the store', async () => {
    const outcome = await authenticateFirstMessage({ token: apiToken }, null, MQTT, checks);
    assert.ok(outcome.ok && outcome.principal !== null);
    const unknown = await authenticateFirstMessage({ token: `${apiToken}x` }, null, MQTT, checks);
    assert.deepEqual(unknown, {
      ok: false,
      refusal: 'bad-credential',
      reason: 'the token was not accepted: The token is not known.',
    });
  });

  it('a forged or expired JWT is a bad credential, with the verifier reason and never the token', async () => {
    for (const token of [
      await jwt({}, 'another-secret-that-is-long-enough-0123'),
      await jwt({}, SECRET, 0),
    ]) {
      const outcome = await authenticateFirstMessage({ token }, null, MQTT, checks);
      assert.ok(!outcome.ok);
      assert.equal(outcome.refusal, 'bad-credential');
      assert.match(outcome.reason, /^the token was not accepted: /);
      assert.ok(!outcome.reason.includes(token.split('.')[2] as string));
    }
  });

  it('a stored password gives its principal with its scopes; a wrong one is a bad credential', async () => {
    const good = await authenticateFirstMessage(password('dev-7', 'dev-7-pass'), null, MQTT, checks);
    assert.ok(good.ok);
    assert.equal(good.principal?.subject, 'dev-7');
    assert.deepEqual(good.principal?.claims['scopes'], ['mqtt:publish:d/7/#']);
    for (const [user, secret] of [
      ['dev-7', 'wrong'],
      ['nobody', 'dev-7-pass'],
    ] as const) {
      assert.deepEqual(await authenticateFirstMessage(password(user, secret), null, MQTT, checks), {
        ok: false,
        refusal: 'bad-credential',
        reason: 'the user name and password was not accepted: bad user name or password',
      });
    }
  });

  it('without a password check (no store) no user name and password is accepted', async () => {
    const noStore = { ...checks, passwords: null };
    const outcome = await authenticateFirstMessage(password('dev-7', 'dev-7-pass'), null, MQTT, noStore);
    assert.ok(!outcome.ok && outcome.refusal === 'bad-credential');
  });

  it('endpoint: scopes hold for tokens and passwords alike; no endpoint (TCP) has none to hold', async () => {
    const elsewhere = await jwt({ scope: 'endpoint:/chat' });
    assert.deepEqual(await authenticateFirstMessage({ token: elsewhere }, null, MQTT, checks), {
      ok: false,
      refusal: 'forbidden',
      reason: 'the token was not accepted: this credential does not open /mqtt',
    });
    assert.deepEqual(await authenticateFirstMessage(password('chatter', 'chat-pass'), null, MQTT, checks), {
      ok: false,
      refusal: 'forbidden',
      reason: 'the user name and password was not accepted: this credential does not open /mqtt',
    });
    const chat = { ...MQTT, path: '/chat' };
    assert.ok((await authenticateFirstMessage({ token: elsewhere }, null, chat, checks)).ok);
    const tcp = { ...MQTT, path: null };
    assert.ok((await authenticateFirstMessage(password('chatter', 'chat-pass'), null, tcp, checks)).ok);
  });

  it('no credential: the handshake principal stands; a required endpoint without one refuses', async () => {
    for (const mode of ['none', 'optional', 'required'] as const) {
      const endpoint = { ...MQTT, mode };
      assert.deepEqual(await authenticateFirstMessage(null, HANDSHAKE, endpoint, checks), {
        ok: true,
        principal: HANDSHAKE,
      });
    }
    assert.deepEqual(await authenticateFirstMessage(null, null, { ...MQTT, mode: 'optional' }, checks), {
      ok: true,
      principal: null,
    });
    assert.deepEqual(await authenticateFirstMessage(null, null, { ...MQTT, mode: 'required' }, checks), {
      ok: false,
      refusal: 'missing',
      reason: 'a credential is required',
    });
  });

  it('a check that never finishes is refused at the endpoint timeout', async () => {
    // A store that never answers: the one stand-in here, since a real one cannot be made to hang.
    const stalled: PasswordCheck = { verifyPassword: () => new Promise(() => undefined) };
    const started = performance.now();
    const outcome = await authenticateFirstMessage(
      password('dev-7', 'dev-7-pass'),
      null,
      { ...MQTT, timeoutMs: 50 },
      { ...checks, passwords: stalled },
    );
    assert.deepEqual(outcome, {
      ok: false,
      refusal: 'timeout',
      reason: 'the credential check did not finish in time',
    });
    assert.ok(performance.now() - started >= 45);
  });

  it('a store that fails is unavailable for passwords; a token it cannot check is a bad credential', async () => {
    const closed = await BrokerStore.open({ sqlitePath: ':memory:' });
    await closed.close();
    const broken = {
      verifyToken: (token: string) =>
        closed.credentials.verifyToken(token).then((v) => ({ ...v, carrier: 'first-message' as const })),
      passwords: { verifyPassword: (u: string, p: Uint8Array) => closed.credentials.verifyPassword(u, p) },
    };
    assert.deepEqual(await authenticateFirstMessage(password('dev-7', 'x'), null, MQTT, broken), {
      ok: false,
      refusal: 'unavailable',
      reason: 'the user name and password was not accepted: the credential store did not answer',
    });
    assert.deepEqual(await authenticateFirstMessage({ token: apiToken }, null, MQTT, broken), {
      ok: false,
      refusal: 'bad-credential',
      reason: 'the token was not accepted: verification failed',
    });
  });
});
