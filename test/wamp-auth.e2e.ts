import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import request from 'supertest';
import { sign as craSigner } from 'wampy/wampcra.js';
import { WampModule } from '#broker/protocols/wamp';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { signToken } from './support/tokens.js';
import { autobahn, connectWampy, openAutobahn, settled } from './support/wamp-clients.js';
import { RawWamp } from './support/wamp-raw.js';

const ALL = ['call', 'register', 'publish', 'subscribe'];
const JOE_SECRET = 'joe-secret-never-logged';
const PETER_SECRET = 'peter-secret-never-logged';

const BOB_PASSWORD = 'bob-password-never-logged';

type CraInfo = Parameters<ReturnType<typeof craSigner>>[1];

interface WampyError {
  errorUri?: string;
  message: string;
}

describe('wamp.2.json authentication and authorization', () => {
  let broker: TestBroker;
  let url: string;
  let token: string;
  const secrets: string[] = [JOE_SECRET, PETER_SECRET, BOB_PASSWORD];

  before(async () => {
    broker = await startTestBroker(
      {
        endpoints: [
          {
            path: '/ws',
            subprotocols: ['wamp.2.json'],
            defaultModule: 'wamp.2.json',
            auth: { mode: 'optional', carriers: ['query'] },
          },
          {
            path: '/private',
            subprotocols: ['wamp.2.json'],
            defaultModule: 'wamp.2.json',
            auth: { mode: 'required', carriers: ['header', 'first-message'] },
          },
        ],
        wamp: {
          realms: [
            { name: 'realm1' },
            {
              name: 'secure',
              anonymousRole: 'guest',
              authenticatedRole: 'member',
              roles: [
                {
                  name: 'guest',
                  permissions: [{ uri: 'com.public.', match: 'prefix', allow: ['subscribe', 'call'] }],
                },
                {
                  name: 'member',
                  permissions: [
                    { uri: 'com.admin.', match: 'prefix', allow: [] },
                    { uri: '', match: 'prefix', allow: ALL },
                  ],
                },
                { name: 'admin', permissions: [{ uri: '', match: 'prefix', allow: ALL }] },
              ],
              wampcra: [
                { authid: 'joe', role: 'member', secret: JOE_SECRET },
                {
                  authid: 'peter',
                  role: 'admin',
                  secret: PETER_SECRET,
                  salt: 'peter-salt',
                  iterations: 100,
                  keylen: 32,
                },
              ],
            },
          ],
        },
      },
      [WampModule],
    );
    // A real stored password credential; its wamp:role scope is the session's authrole.
    await request(broker.url.replace(/^ws/, 'http'))
      .post('/admin/v1/credentials/passwords')
      .send({ name: 'bob', username: 'bob', password: BOB_PASSWORD, scopes: ['wamp:role:admin'] })
      .expect(201);
    url = `${broker.url}/ws`;
    token = await signToken({ sub: 'alice' });
    secrets.push(token);
  });

  after(async () => {
    const logs = broker.logText();
    // The failed logins were logged (so the check below looks at real lines), without their secrets.
    assert.match(
      logs,
      /WAMP session aborted.*authentication_failed|authentication_failed.*WAMP session aborted/,
    );
    for (const secret of secrets) assert.equal(logs.includes(secret), false, 'a secret reached the log');
    await broker.close();
  });

  it('ticket with a JWT: wampy and autobahn', async () => {
    const wampy = await connectWampy(url, {
      realm: 'secure',
      authid: 'ignored',
      authmethods: ['ticket'],
      onChallenge: () => token,
    });
    assert.equal(wampy.getSessionId() !== null, true);
    await wampy.disconnect();

    const ab = await openAutobahn(url, {
      realm: 'secure',
      authmethods: ['ticket'],
      onchallenge: () => token,
    });
    assert.deepEqual(
      [ab.details['authid'], ab.details['authrole'], ab.details['authmethod']],
      ['alice', 'member', 'ticket'],
    );
    ab.close();
  });

  it('a bad ticket aborts with authentication_failed', async () => {
    const forged = await signToken({ sub: 'mallory', secret: 'another-secret-that-is-32-characters-long!' });
    secrets.push(forged);
    await assert.rejects(
      openAutobahn(url, { realm: 'secure', authmethods: ['ticket'], onchallenge: () => forged }),
      /wamp\.error\.authentication_failed/,
    );
    // A good token for another endpoint only (endpoint: scopes), as refused at the handshake.
    const elsewhere = await signToken({ sub: 'eve', claims: { scope: 'endpoint:/chat' } });
    secrets.push(elsewhere);
    await assert.rejects(
      openAutobahn(url, { realm: 'secure', authmethods: ['ticket'], onchallenge: () => elsewhere }),
      /wamp\.error\.authentication_failed/,
    );
    await assert.rejects(
      connectWampy(url, {
        realm: 'secure',
        authid: 'mallory',
        authmethods: ['ticket'],
        onChallenge: () => forged,
      }),
      (err: WampyError) => {
        assert.match(`${err.errorUri ?? ''} ${err.message}`, /authentication_failed/);
        return true;
      },
    );
  });

  it('ticket as a stored password, with the authid as username', async () => {
    const wampy = await connectWampy(url, {
      realm: 'secure',
      authid: 'bob',
      authmethods: ['ticket'],
      onChallenge: () => BOB_PASSWORD,
    });
    const whoami = (await wampy.call('wamp.session.get', [wampy.getSessionId()])) as {
      argsList: Record<string, unknown>[];
    };
    assert.deepEqual(
      [
        whoami.argsList[0]?.['authid'],
        whoami.argsList[0]?.['authrole'],
        whoami.argsList[0]?.['authprovider'],
      ],
      ['bob', 'admin', 'password'],
    );
    await wampy.disconnect();
    await assert.rejects(
      openAutobahn(url, {
        realm: 'secure',
        authid: 'bob',
        authmethods: ['ticket'],
        onchallenge: () => 'wrong',
      }),
      /wamp\.error\.authentication_failed/,
    );
  });

  it('wampcra: plain secret with wampy, salted secret with autobahn', async () => {
    const wampy = await connectWampy(url, {
      realm: 'secure',
      authid: 'joe',
      authmethods: ['wampcra'],
      onChallenge: (method, extra) => craSigner(JOE_SECRET)(method, extra as unknown as CraInfo),
    });
    const whoami = (await wampy.call('wamp.session.get', [wampy.getSessionId()])) as {
      argsList: Record<string, unknown>[];
    };
    assert.deepEqual(
      [whoami.argsList[0]?.['authid'], whoami.argsList[0]?.['authrole'], whoami.argsList[0]?.['authmethod']],
      ['joe', 'member', 'wampcra'],
    );
    await wampy.disconnect();

    const ab = await openAutobahn(url, {
      realm: 'secure',
      authid: 'peter',
      authmethods: ['wampcra'],
      onchallenge: (
        _session: unknown,
        _method: string,
        extra: { challenge: string; salt: string; iterations: number; keylen: number },
      ) =>
        autobahn.auth_cra.sign(
          autobahn.auth_cra.derive_key(PETER_SECRET, extra.salt, extra.iterations, extra.keylen),
          extra.challenge,
        ),
    });
    assert.deepEqual([ab.details['authid'], ab.details['authrole']], ['peter', 'admin']);
    ab.close();
  });

  it('wampcra with a wrong secret or an unknown authid fails', async () => {
    for (const authid of ['joe', 'nobody']) {
      await assert.rejects(
        openAutobahn(url, {
          realm: 'secure',
          authid,
          authmethods: ['wampcra'],
          onchallenge: (_s: unknown, _m: string, extra: { challenge: string }) =>
            autobahn.auth_cra.sign('wrong', extra.challenge),
        }),
        /wamp\.error\.authentication_failed/,
        authid,
      );
    }
  });

  it('wampcra with a credential stored through the admin API (salted), until it is revoked', async () => {
    const secret = 'stored-wampcra-secret-0123';
    const created = await request(broker.url.replace(/^ws/, 'http'))
      .post('/admin/v1/credentials/wampcra')
      .send({ name: 'stored', authid: 'stella', secret, scopes: ['wamp:role:admin'] })
      .expect(201);
    assert.ok(!JSON.stringify(created.body).includes(secret));
    const login = (key: string) =>
      openAutobahn(url, {
        realm: 'secure',
        authid: 'stella',
        authmethods: ['wampcra'],
        onchallenge: (
          _session: unknown,
          _method: string,
          extra: { challenge: string; salt: string; iterations: number; keylen: number },
        ) =>
          autobahn.auth_cra.sign(
            autobahn.auth_cra.derive_key(key, extra.salt, extra.iterations, extra.keylen),
            extra.challenge,
          ),
      });
    const ab = await login(secret);
    assert.deepEqual(
      [ab.details['authid'], ab.details['authrole'], ab.details['authprovider']],
      ['stella', 'admin', 'store'],
    );
    ab.close();
    await assert.rejects(login('not-the-secret'), /wamp\.error\.authentication_failed/);
    await request(broker.url.replace(/^ws/, 'http'))
      .delete(`/admin/v1/credentials/${created.body.id as string}`)
      .expect(200);
    await assert.rejects(login(secret), /wamp\.error\.authentication_failed/);
    assert.doesNotMatch(broker.logText(), /stored-wampcra-secret/);
  });

  it('the principal from the handshake (token in the query) is the session identity', async () => {
    const ab = await openAutobahn(`${url}?token=${token}`, { realm: 'secure' });
    assert.deepEqual(
      [ab.details['authid'], ab.details['authrole'], ab.details['authmethod']],
      ['alice', 'member', 'handshake'],
    );
    ab.close();
  });

  it('an endpoint that requires authentication admits no anonymous session, but a ticket', async () => {
    const privateUrl = `${broker.url}/private`;
    await assert.rejects(openAutobahn(privateUrl), /wamp\.error\.no_auth_method/);
    const ab = await openAutobahn(privateUrl, { authmethods: ['ticket'], onchallenge: () => token });
    assert.equal(ab.details['authid'], 'alice');
    ab.close();
  });

  it('roles: a guest may subscribe and call under com.public. only; a member not under com.admin.', async () => {
    const guest = await connectWampy(url, { realm: 'secure' });
    await guest.subscribe('com.public.news', () => undefined);
    const refused = async (operation: Promise<unknown>): Promise<void> => {
      await assert.rejects(operation, (err: WampyError) => {
        assert.equal(err.errorUri, 'wamp.error.not_authorized');
        return true;
      });
    };
    await refused(guest.subscribe('com.private.news', () => undefined));
    await refused(guest.publish('com.public.news', 'hi', { acknowledge: true }));
    await refused(guest.register('com.public.echo', () => ({ argsList: [] })));
    await refused(guest.call('com.private.echo'));
    await guest.disconnect();

    const member = await openAutobahn(url, {
      realm: 'secure',
      authmethods: ['ticket'],
      onchallenge: () => token,
    });
    await assert.rejects(settled(member.session.call('com.admin.reset')), (err: { error: string }) => {
      assert.equal(err.error, 'wamp.error.not_authorized');
      return true;
    });
    await assert.rejects(
      member.session.register('com.admin.reset', () => 1),
      (err: { error: string }) => {
        assert.equal(err.error, 'wamp.error.not_authorized');
        return true;
      },
    );
    await member.session.register('com.member.echo', (args) => args[0]);
    member.close();
  });

  it('anonymous sessions in realm1 are open to everything by default', async () => {
    const { client } = await RawWamp.join(url);
    const registered = await client.request([64, 1, {}, 'com.anything']);
    assert.equal(registered[0], 65);
    client.close();
  });
});
