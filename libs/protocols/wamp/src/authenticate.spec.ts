import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Principal } from '#broker/handshake';
import { craKey, craSign } from './wampcra.js';
import { ALICE, realm, ROLES, testRouter } from './testing.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('authentication', () => {
  it('ticket: a token the verifier accepts; the role comes from an authrole claim naming a realm role', async () => {
    const reader: Principal = { subject: 'rita', claims: { authrole: 'reader' }, carrier: 'first-message' };
    const { connect } = testRouter();
    const client = connect({
      verifyToken: (t) => (t === 'good-token' ? Promise.resolve(reader) : Promise.reject(new Error('no'))),
    });
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'], authid: 'ignored' }]);
    assert.deepEqual(client.take(), [[4, 'ticket', {}]]);
    client.receive([5, 'good-token', {}]);
    await settle();
    const [welcome] = client.take();
    assert.equal(welcome?.[0], 2);
    assert.deepEqual(
      { ...(welcome?.[2] as object), roles: undefined },
      {
        roles: undefined,
        realm: 'realm1',
        authid: 'rita',
        authrole: 'reader',
        authmethod: 'ticket',
        authprovider: 'token',
      },
    );
  });

  it('ticket: a bad token aborts with authentication_failed, without echoing the ticket', async () => {
    const { connect } = testRouter();
    const client = connect();
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'] }]);
    client.take();
    client.receive([5, 'secret-but-wrong', {}]);
    await settle();
    const [abort] = client.take();
    assert.equal(abort?.[2], 'wamp.error.authentication_failed');
    assert.doesNotMatch(JSON.stringify(abort), /secret-but-wrong/);
    assert.equal(client.closedWith?.code, 1000);
  });

  it('ticket as a password, when a password check is installed and HELLO names the authid', async () => {
    const { connect } = testRouter();
    const seen: string[] = [];
    const client = connect({
      verifyPassword: (username, password) => {
        seen.push(`${username}:${Buffer.from(password).toString()}`);
        return Promise.resolve(
          username === 'bob' ? { subject: 'bob', claims: {}, carrier: 'first-message' } : null,
        );
      },
    });
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'], authid: 'bob' }]);
    client.receive([5, 'hunter2', {}]);
    await settle();
    const welcome = client.take().find((m) => m[0] === 2);
    assert.equal((welcome?.[2] as { authid: string }).authid, 'bob');
    assert.equal((welcome?.[2] as { authprovider: string }).authprovider, 'password');
    assert.deepEqual(seen, ['bob:hunter2']);
  });

  it('wampcra: plain and salted secrets; a wrong signature and an unknown authid fail alike', async () => {
    const salt = { salt: 'pepper', iterations: 10, keylen: 32 };
    const craUsers = new Map([
      ['joe', { authid: 'joe', role: 'reader', key: craKey('joe-secret') }],
      ['pat', { authid: 'pat', role: 'authenticated', key: craKey('pat-secret', salt), salt }],
    ]);
    const { connect } = testRouter({ realms: [realm('realm1', { craUsers })] });
    const attempt = async (authid: string, secret: string): Promise<unknown[][]> => {
      const client = connect();
      client.receive([1, 'realm1', { roles: ROLES, authmethods: ['wampcra'], authid }]);
      const [challenge] = client.take() as [[number, string, Record<string, unknown>]];
      assert.equal(challenge[1], 'wampcra');
      const extra = challenge[2];
      const key = extra['salt'] === undefined ? secret : craKey(secret, extra as unknown as typeof salt);
      client.receive([5, craSign(key, extra['challenge'] as string), {}]);
      await settle();
      return client.take();
    };
    const joe = await attempt('joe', 'joe-secret');
    assert.deepEqual([joe[0]?.[0], (joe[0]?.[2] as { authrole: string }).authrole], [2, 'reader']);
    const pat = await attempt('pat', 'pat-secret');
    assert.equal(pat[0]?.[0], 2);
    assert.equal((await attempt('joe', 'wrong'))[0]?.[2], 'wamp.error.authentication_failed');
    assert.equal((await attempt('nobody', 'x'))[0]?.[2], 'wamp.error.authentication_failed');
  });

  it('wampcra from the store: the lookup runs before the challenge; messages meanwhile are violations', async () => {
    const salt = { salt: 'stored-salt', iterations: 10, keylen: 32 };
    const stored = {
      ...salt,
      key: craKey('stored-secret', salt),
      principal: { subject: 'stella', claims: { authrole: 'reader' }, carrier: 'first-message' as const },
    };
    const { connect } = testRouter();
    const login = async (authid: string, secret: string): Promise<unknown[][]> => {
      const client = connect({ craKey: (id) => Promise.resolve(id === 'stella' ? stored : null) });
      client.receive([1, 'realm1', { roles: ROLES, authmethods: ['wampcra'], authid }]);
      await settle();
      const [challenge] = client.take() as [[number, string, Record<string, unknown>]];
      const extra = challenge[2];
      // Unknown authids get a salted challenge too, so they cannot be told from a wrong secret.
      assert.equal(typeof extra['salt'], 'string');
      const key = craKey(secret, extra as unknown as typeof salt);
      client.receive([5, craSign(key, extra['challenge'] as string), {}]);
      await settle();
      return client.take();
    };
    const ok = await login('stella', 'stored-secret');
    assert.deepEqual([ok[0]?.[0], (ok[0]?.[2] as { authprovider: string }).authprovider], [2, 'store']);
    assert.equal((await login('stella', 'wrong'))[0]?.[2], 'wamp.error.authentication_failed');
    assert.equal((await login('nobody', 'x'))[0]?.[2], 'wamp.error.authentication_failed');

    let release: (value: null) => void = () => undefined;
    const early = connect({ craKey: () => new Promise((resolve) => (release = resolve)) });
    early.receive([1, 'realm1', { roles: ROLES, authmethods: ['wampcra'], authid: 'x' }]);
    early.receive([32, 1, {}, 'com.example.topic']);
    assert.equal((early.take()[0] as unknown[])[2], 'wamp.error.protocol_violation');
    release(null);
    await settle();
    assert.deepEqual(early.take(), []);
  });

  it('the handshake principal is the session identity, whatever HELLO asks', () => {
    const { connect } = testRouter();
    const client = connect({ principal: ALICE });
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['wampcra'], authid: 'joe' }]);
    const details = client.take()[0]?.[2] as Record<string, unknown>;
    assert.deepEqual(
      [details['authid'], details['authmethod'], details['authrole']],
      ['alice', 'handshake', 'authenticated'],
    );
  });

  it('no anonymous session where the endpoint requires authentication or the realm forbids it', () => {
    const { connect } = testRouter({ realms: [realm('realm1'), realm('closed', { anonymousRole: null })] });
    const required = connect({ anonymousAllowed: false });
    required.receive([1, 'realm1', { roles: ROLES }]);
    assert.equal(required.take()[0]?.[2], 'wamp.error.no_auth_method');
    const closed = connect();
    closed.receive([1, 'closed', { roles: ROLES, authmethods: ['anonymous'] }]);
    assert.equal(closed.take()[0]?.[2], 'wamp.error.no_auth_method');
  });

  it('the first offered method the realm can do wins', () => {
    const { connect } = testRouter();
    const client = connect();
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['cryptosign', 'anonymous', 'ticket'] }]);
    assert.equal((client.take()[0]?.[2] as { authmethod: string }).authmethod, 'anonymous');
  });
});
