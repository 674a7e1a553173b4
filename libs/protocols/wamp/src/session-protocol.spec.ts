import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Principal } from '#broker/handshake';
import { SessionProtocol } from './session-protocol.js';
import { ALICE, realm, ROLES, TestClient, testCredentials, testRouter } from './testing.js';

const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('session protocol', () => {
  it('HELLO details that cannot be right abort', () => {
    const { connect } = testRouter();
    for (const details of [
      { authmethods: 'ticket' },
      { authid: 42, authmethods: ['wampcra'] },
      { authid: 'x'.repeat(300) },
    ]) {
      const client = connect();
      client.receive([1, 'realm1', details]);
      assert.equal(
        client.take()[0]?.[2],
        'wamp.error.protocol_violation',
        JSON.stringify(details).slice(0, 40),
      );
      assert.equal(client.closedWith?.code, 1002);
    }
    for (const name of [42, '', 'a..b', 'has space', 'x'.repeat(2000)]) {
      const client = connect();
      client.receive([1, name, {}]);
      const message = (client.take()[0]?.[1] as { message: string }).message;
      assert.match(message, /Realm must be a URI/, String(name).slice(0, 9));
    }
  });

  it('no WELCOME within the auth timeout aborts; a verification finishing after the end does nothing', async () => {
    const { connect, clock } = testRouter();
    const idle = connect();
    clock.advance(1000);
    assert.equal(idle.take()[0]?.[2], 'wamp.error.authentication_failed');
    assert.equal(idle.closedWith?.code, 1000);

    let release: (p: Principal) => void = () => undefined;
    const slow = connect({ verifyToken: () => new Promise((resolve) => (release = resolve)) });
    slow.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'] }]);
    slow.receive([5, 'token', {}]);
    slow.receive([32, 1, {}, 'com.too.early']);
    assert.match((slow.take().at(-1)?.[1] as { message: string }).message, /SUBSCRIBE before WELCOME/);
    release(ALICE);
    await settle();
    assert.deepEqual(slow.take(), []);
  });

  it('unknown realms are created on first use when allowed, up to maxRealms', () => {
    const { connect } = testRouter({ autoRealm: realm('template') });
    for (const name of ['new.one', 'new.two']) {
      const client = connect();
      client.receive([1, name, { roles: ROLES }]);
      assert.equal((client.take()[0]?.[2] as { realm: string }).realm, name);
    }
    const client = connect();
    client.receive([1, 'new.three', { roles: ROLES }]);
    assert.equal(client.take()[0]?.[2], 'wamp.error.no_such_realm');
  });

  it('shutdown sends GOODBYE system_shutdown to open sessions', () => {
    const { join } = testRouter();
    const client = join();
    client.protocol.shutdown();
    assert.deepEqual(client.take(), [[6, {}, 'wamp.close.system_shutdown']]);
  });
  it('a failure after an asynchronous verification aborts the session, never the process', async () => {
    const { router } = testRouter();
    class BrokenClient extends TestClient {
      override send(text: string): void {
        if (text.startsWith('[2,')) throw new Error('transport bug');
        super.send(text);
      }
    }
    const client = new BrokenClient();
    const failures: unknown[] = [];
    client.protocol = new SessionProtocol(
      router,
      client,
      testCredentials({ verifyToken: () => Promise.resolve(ALICE) }),
      { failed: (err) => failures.push(err) },
    );
    client.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'] }]);
    client.receive([5, 'token', {}]);
    await settle();
    assert.equal((failures[0] as Error).message, 'transport bug');
    assert.equal(client.take().at(-1)?.[2], 'wamp.error.authentication_failed');
    assert.equal(client.closedWith?.code, 1000);
  });
  it('only AUTHENTICATE (or ABORT) may answer a CHALLENGE', () => {
    const { connect } = testRouter();
    const impatient = connect();
    impatient.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'] }]);
    impatient.receive([16, 1, {}, 'com.x']);
    const abort = impatient.take().at(-1);
    assert.equal(abort?.[2], 'wamp.error.protocol_violation');
    assert.match((abort?.[1] as { message: string }).message, /PUBLISH while a CHALLENGE is unanswered/);

    const quitter = connect();
    quitter.receive([1, 'realm1', { roles: ROLES, authmethods: ['ticket'] }]);
    quitter.take();
    quitter.receive([3, {}, 'wamp.close.canceled']);
    assert.deepEqual(quitter.take(), [], 'ABORT is not answered');
    assert.equal(quitter.closedWith?.code, 1000);
  });

  it('GOODBYE before a session, and messages after the end, are handled', () => {
    const { connect } = testRouter();
    const early = connect();
    early.receive([6, {}, 'wamp.close.close_realm']);
    assert.match((early.take()[0]?.[1] as { message: string }).message, /GOODBYE before WELCOME/);
    early.receive([1, 'realm1', { roles: ROLES }]);
    assert.deepEqual(early.take(), [], 'nothing is answered once the session ended');
  });
});
