import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Permissions } from './permissions.js';
import { realm, testRouter } from './testing.js';

describe('broker', () => {
  it('subscribe, publish with acknowledge, EVENT; publisher excluded by default', () => {
    const { join } = testRouter();
    const sub = join();
    const pub = join();
    const [type, request, subscription] = sub.request([32, 1, {}, 'com.a.b']);
    assert.deepEqual([type, request], [33, 1]);
    pub.request([32, 7, {}, 'com.a.b']);
    const published = pub.request([16, 2, { acknowledge: true }, 'com.a.b', [1], { k: 'v' }]);
    assert.equal(published[0], 17);
    assert.deepEqual(sub.take(), [[36, subscription, published[2], {}, [1], { k: 'v' }]]);
    pub.receive([16, 3, { exclude_me: false }, 'com.a.b', ['me too']]);
    assert.equal(pub.take().length, 1);
  });

  it('a second subscribe to the same topic returns the same ID; unsubscribe, then no_such_subscription', () => {
    const harness = testRouter();
    const { join } = harness;
    const a = join();
    const b = join();
    const { router } = harness;
    assert.equal(router.existingRealm('realm1')?.broker.hasSubscriptions, false);
    const first = a.request([32, 1, {}, 'com.t']);
    assert.equal(router.existingRealm('realm1')?.broker.hasSubscriptions, true);
    assert.deepEqual(a.request([32, 2, {}, 'com.t']), [33, 2, first[2]]);
    assert.deepEqual(b.request([32, 1, {}, 'com.t'])[2], first[2]);
    assert.deepEqual(a.request([34, 3, first[2]]), [35, 3]);
    assert.deepEqual(a.request([34, 4, first[2]]).slice(0, 5), [
      8,
      34,
      4,
      {},
      'wamp.error.no_such_subscription',
    ]);
    b.take();
    a.receive([16, 5, {}, 'com.t', ['x']]);
    assert.equal(b.take().length, 1);
    b.receive([34, 6, first[2]]);
    assert.equal(router.existingRealm('realm1')?.broker.hasSubscriptions, false, 'the last one gone');
  });

  it('keeps order per publisher and subscriber', () => {
    const { join } = testRouter();
    const sub = join();
    const pub = join();
    sub.request([32, 1, {}, 'com.seq']);
    for (let i = 0; i < 50; i++) pub.receive([16, i + 1, {}, 'com.seq', [i]]);
    assert.deepEqual(
      sub.take().map((m) => (m[4] as number[])[0]),
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  it('prefix and wildcard subscriptions get the concrete topic in Details', () => {
    const { join } = testRouter();
    const sub = join();
    const pub = join();
    const prefix = sub.request([32, 1, { match: 'prefix' }, 'com.p'])[2];
    const wildcard = sub.request([32, 2, { match: 'wildcard' }, 'com..x'])[2];
    pub.receive([16, 1, {}, 'com.p.x', ['both']]);
    const events = sub.take();
    assert.deepEqual(
      events.map((e) => [e[1], e[3]]).sort(),
      [
        [prefix, { topic: 'com.p.x' }],
        [wildcard, { topic: 'com.p.x' }],
      ].sort(),
    );
    pub.receive([16, 2, {}, 'com.q.y', ['neither']]);
    assert.deepEqual(sub.take(), []);
  });

  it('black- and whitelisting by session, authid and authrole; publisher disclosure', () => {
    const { join } = testRouter();
    const pub = join();
    const a = join();
    const b = join();
    for (const s of [a, b]) s.request([32, 1, {}, 'com.l']);
    const receivers = (options: object): number[] => {
      pub.receive([16, 1, options, 'com.l']);
      return [a, b].filter((s) => s.take().length > 0).map((s) => s.sessionId);
    };
    assert.deepEqual(receivers({ exclude: [a.sessionId] }), [b.sessionId]);
    assert.deepEqual(receivers({ eligible: [a.sessionId] }), [a.sessionId]);
    assert.deepEqual(receivers({ exclude_authrole: ['anonymous'] }), []);
    assert.deepEqual(receivers({ eligible_authrole: ['anonymous'] }), [a.sessionId, b.sessionId]);
    const aAuthid = (a.welcome[2] as { authid: string }).authid;
    assert.deepEqual(receivers({ eligible_authid: [aAuthid] }), [a.sessionId]);
    assert.deepEqual(receivers({ exclude_authid: [aAuthid] }), [b.sessionId]);
    pub.receive([16, 1, { disclose_me: true }, 'com.l']);
    const details = a.take()[0]?.[3] as Record<string, unknown>;
    assert.equal(details['publisher'], pub.sessionId);
    assert.equal(details['publisher_authrole'], 'anonymous');
  });

  it('refuses bad topics, reserved topics, bad options and unauthorized roles (errors only when acknowledged)', () => {
    const { join } = testRouter({ realms: [realm('realm1', { anonymousRole: 'reader' })] });
    const c = join();
    const error = (m: unknown[]): unknown => c.request(m)[4];
    assert.equal(error([32, 1, {}, 'com..bad']), 'wamp.error.invalid_uri');
    assert.equal(error([32, 1, { match: 'regex' }, 'com.x']), 'wamp.error.invalid_argument');
    assert.equal(error([32, 1, {}, 'com.private.x']), 'wamp.error.not_authorized');
    assert.equal(c.request([32, 1, {}, 'com.public.x'])[0], 33);
    assert.equal(error([16, 1, { acknowledge: true }, 'wamp.session.on_join']), 'wamp.error.invalid_uri');
    assert.equal(error([16, 1, { acknowledge: true }, 'com.public.x']), 'wamp.error.not_authorized');
    assert.equal(
      error([16, 1, { acknowledge: true, exclude: 'x' }, 'com.public.x']),
      'wamp.error.not_authorized',
    );
    c.receive([16, 1, {}, 'com.public.x']);
    assert.deepEqual(c.take(), [], 'no answer without acknowledge');
  });

  it('a pattern subscription only gets topics its role may subscribe to', () => {
    const roles = new Map(realm('x').roles);
    roles.set(
      'reader',
      new Permissions([
        { uri: 'com.public.secret', match: 'prefix', allow: [] },
        { uri: 'com.public.', match: 'prefix', allow: ['subscribe', 'publish'] },
      ]),
    );
    const { join } = testRouter({ realms: [realm('realm1', { anonymousRole: 'reader', roles })] });
    const reader = join();
    const other = join();
    assert.equal(reader.request([32, 1, { match: 'prefix' }, 'com.public.'])[0], 33);
    other.receive([16, 1, {}, 'com.public.news']);
    other.receive([16, 2, {}, 'com.public.secret.plans']);
    assert.deepEqual(
      reader.take().map((e) => e[3]),
      [{ topic: 'com.public.news' }],
    );
  });

  it('malformed black- or whitelists answer invalid_argument to an acknowledged publication', () => {
    const { join } = testRouter();
    const c = join();
    for (const options of [
      { exclude: 'x' },
      { eligible: [0] },
      { exclude_authid: [1] },
      { eligible_authrole: 'r' },
    ]) {
      assert.equal(
        c.request([16, 1, { acknowledge: true, ...options }, 'com.x'])[4],
        'wamp.error.invalid_argument',
      );
    }
  });

  it('limits subscriptions per session', () => {
    const { join } = testRouter();
    const c = join();
    for (let i = 1; i <= 3; i++) assert.equal(c.request([32, i, {}, `com.t${i}`])[0], 33);
    assert.equal(c.request([32, 4, {}, 'com.t4'])[4], 'broker.error.limit_exceeded');
    assert.equal(c.request([32, 5, {}, 'com.t1'])[0], 33, 'the same topic again is not a new subscription');
  });

  it('hands accepted client publications to the bridge hook, but not those meant for some sessions only', () => {
    const { join, published } = testRouter();
    const alice = join();
    alice.receive([16, 1, {}, 'com.bridge', ['x']]);
    // The bus has no sessions to match eligible or exclude lists against: bridged, they would reach everyone.
    for (const [key, list] of [
      ['eligible', [alice.sessionId]],
      ['exclude', [1]],
      ['eligible_authid', ['bob']],
      ['exclude_authrole', ['guest']],
    ] as const) {
      alice.receive([16, 2, { [key]: list }, 'com.bridge', ['restricted']]);
    }
    assert.deepEqual(published, [{ realm: 'realm1', topic: 'com.bridge', args: ['x'] }]);
  });
  it('a strict realm takes only [0-9a-z_] components', () => {
    const { join } = testRouter({ realms: [realm('realm1', { uriRule: 'strict' })] });
    const c = join();
    assert.equal(c.request([32, 1, {}, 'com.Example'])[4], 'wamp.error.invalid_uri');
    assert.equal(c.request([32, 2, {}, 'com.ex-ample'])[4], 'wamp.error.invalid_uri');
    assert.equal(c.request([32, 3, {}, 'com.example_1'])[0], 33);
    assert.equal(c.request([64, 4, {}, 'com.Proc'])[4], 'wamp.error.invalid_uri');
  });
});
