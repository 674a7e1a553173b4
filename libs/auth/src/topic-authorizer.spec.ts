import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type TopicRuleConfig } from '#broker/config';
import { type Principal } from '#broker/handshake';
import { TopicAuthorizer, type TopicGrant } from './topic-authorizer.js';

const alice: Principal = { subject: 'alice', claims: {}, carrier: 'first-message' };

function principal(claims: Record<string, unknown>): Principal {
  return { subject: 's', claims, carrier: 'first-message' };
}

function rule(overrides: Partial<TopicRuleConfig> & Pick<TopicRuleConfig, 'topics'>): TopicRuleConfig {
  return { who: 'all', action: 'all', permission: 'allow', ...overrides };
}

function grant(
  rules: TopicRuleConfig[],
  noMatch: 'allow' | 'deny',
  clientId: string | null,
  who: Principal | null = null,
): TopicGrant {
  return new TopicAuthorizer({ rules, noMatch }).grantFor({ principal: who, clientId });
}

describe('TopicAuthorizer: scopes', () => {
  const open = (p: Principal | null): TopicGrant =>
    new TopicAuthorizer({ rules: [], noMatch: 'allow' }).grantFor({ principal: p, clientId: null });

  it('no principal or no bus scope: unrestricted, except publishing to $SYS', () => {
    for (const p of [null, principal({ scope: 'admin endpoint:/mqtt' })]) {
      const g = open(p);
      assert.equal(g.mayPublish('any/topic'), true);
      assert.equal(g.maySubscribe('#'), true);
      assert.equal(g.mayPublish('$SYS/broker/uptime'), false);
      assert.equal(g.checksReads, false);
    }
  });

  it('bus: scopes and an alias a module added grant exactly what they name, from scope or scopes', () => {
    const authorizer = new TopicAuthorizer({ rules: [], noMatch: 'allow' });
    authorizer.addScopeAlias('older');
    for (const family of ['bus', 'older']) {
      const g = authorizer.grantFor({
        principal: principal({
          scope: `${family}:publish:devices/d1/#`,
          scopes: [`${family}:subscribe:devices/+/cmd`],
        }),
        clientId: null,
      });
      assert.equal(g.mayPublish('devices/d1/temp'), true);
      assert.equal(g.mayPublish('devices/d2/temp'), false);
      assert.equal(g.maySubscribe('devices/d1/cmd'), true);
      assert.equal(g.maySubscribe('devices/+/cmd'), true);
      assert.equal(g.maySubscribe('devices/#'), false);
    }
  });

  it('a family nobody added is not a topic scope: it restricts nothing', () => {
    const g = open(principal({ scope: 'older:publish:devices/d1/#' }));
    assert.equal(g.mayPublish('devices/d2/temp'), true);
  });

  it('a subscribe-only principal may not publish at all; an empty scope value grants nothing', () => {
    const g = open(principal({ scope: 'bus:subscribe:#' }));
    assert.equal(g.maySubscribe('a/b'), true);
    assert.equal(g.mayPublish('a/b'), false);
    assert.equal(open(principal({ scope: 'bus:publish:' })).mayPublish('a'), false);
  });

  it('scopes and rules must both allow', () => {
    const g = grant(
      [rule({ topics: ['devices/d1/secret'], permission: 'deny' })],
      'allow',
      null,
      principal({ scope: 'bus:publish:devices/d1/#' }),
    );
    assert.equal(g.mayPublish('devices/d1/state'), true);
    assert.equal(g.mayPublish('devices/d1/secret'), false);
  });
});

describe('TopicAuthorizer: rules', () => {
  it('no rules: nothing to check per message', () => {
    assert.equal(grant([], 'allow', 'c1').checksReads, false);
  });

  it('the first rule that applies decides; none applies: noMatch', () => {
    const g = grant(
      [
        rule({ action: 'subscribe', topics: ['test/nosubscribe'], permission: 'deny' }),
        rule({ topics: ['test/#'] }),
      ],
      'deny',
      'c1',
    );
    assert.equal(g.maySubscribe('test/nosubscribe'), false);
    assert.equal(g.mayPublish('test/nosubscribe'), true);
    assert.equal(g.maySubscribe('test/other'), true);
    assert.equal(g.maySubscribe('other'), false);
    assert.equal(g.mayRead('test/nosubscribe'), false);
    assert.equal(g.mayRead('test/other'), true);
  });

  it('a subscription a rule covers whole is decided whole; one a rule only cuts through is read message by message', () => {
    const g = grant([rule({ action: 'subscribe', topics: ['sensors/+/temp'] })], 'deny', 'c1');
    assert.equal(g.maySubscribe('sensors/a/temp'), true);
    assert.equal(g.maySubscribe('sensors/+/temp'), true);
    // Wider than the rule: granted, and only what the rule allows arrives.
    assert.equal(g.maySubscribe('sensors/#'), true);
    assert.equal(g.checksReads, true);
    assert.equal(g.mayRead('sensors/a/temp'), true);
    assert.equal(g.mayRead('sensors/a/humidity'), false);
    // Nothing of it may be read: refused.
    assert.equal(g.maySubscribe('other/#'), false);
  });

  it("a wildcard never reads another client's tree (the attacker's +/victim/#)", () => {
    const rules = [rule({ topics: ['devices/%c/#'] }), rule({ topics: ['devices/#'], permission: 'deny' })];
    const attacker = grant(rules, 'allow', 'attacker');
    assert.equal(attacker.maySubscribe('+/victim/#'), true);
    assert.equal(attacker.mayRead('devices/victim/cmd'), false);
    assert.equal(attacker.mayRead('elsewhere/victim/x'), true);
    assert.equal(attacker.maySubscribe('devices/victim/#'), false);
    // Its own tree, and the wildcard over every device that still only shows its own.
    assert.equal(attacker.maySubscribe('devices/attacker/#'), true);
    assert.equal(attacker.maySubscribe('devices/+/cmd'), true);
    assert.equal(attacker.mayRead('devices/attacker/cmd'), true);
    assert.equal(attacker.mayRead('devices/victim/cmd'), false);
  });

  it('a deny covering a filter whole refuses it; an allow before it that cuts through grants the rest', () => {
    const g = grant(
      [rule({ topics: ['secret/public'] }), rule({ topics: ['secret/#'], permission: 'deny' })],
      'allow',
      'c',
    );
    assert.equal(g.maySubscribe('secret/+'), true);
    assert.equal(g.mayRead('secret/public'), true);
    assert.equal(g.mayRead('secret/x'), false);
    assert.equal(g.maySubscribe('secret/x/#'), false);
  });

  it('who: anonymous, authenticated, one user, one client id (never matched by a protocol without ids)', () => {
    const rules = [
      rule({ who: 'anonymous', action: 'publish', topics: ['#'], permission: 'deny' }),
      rule({ user: 'alice', topics: ['alice/#'] }),
      rule({ clientId: 'gateway-1', topics: ['gateways/#'] }),
      rule({ who: 'authenticated', action: 'subscribe', topics: ['news/#'] }),
    ];
    const anonymous = grant(rules, 'deny', 'anon-1');
    assert.equal(anonymous.mayPublish('alice/x'), false);
    assert.equal(anonymous.maySubscribe('news/today'), false);
    const a = grant(rules, 'deny', 'phone', alice);
    assert.equal(a.mayPublish('alice/x'), true);
    assert.equal(a.maySubscribe('news/today'), true);
    assert.equal(a.mayPublish('gateways/1'), false);
    assert.equal(grant(rules, 'deny', 'gateway-1').maySubscribe('gateways/1/#'), true);
    assert.equal(grant(rules, 'deny', null).maySubscribe('gateways/1/#'), false);
  });

  it('%c and %u name the client’s own tree; an id or name holding / + # makes an allow rule grant nothing and a deny rule deny everything', () => {
    const rules = [
      rule({ action: 'publish', topics: ['blocked/%u/#'], permission: 'deny' }),
      rule({ topics: ['devices/%c/#', 'users/%u/#'] }),
    ];
    const device = grant(rules, 'deny', 'dev-7');
    assert.equal(device.mayPublish('devices/dev-7/state'), true);
    assert.equal(device.mayPublish('devices/dev-8/state'), false);
    // No user: a %u rule does not apply (neither the deny nor the allow).
    assert.equal(device.mayPublish('users/x/y'), false);
    assert.equal(grant(rules, 'deny', 'a', alice).maySubscribe('users/alice/#'), true);
    assert.equal(grant(rules, 'deny', 'a', alice).mayPublish('blocked/alice/x'), false);
    // No client id (GraphQL, WAMP): a %c rule does not apply.
    assert.equal(grant(rules, 'deny', null, alice).mayPublish('devices/x/state'), false);
    const sly = grant(rules, 'deny', '#', { ...alice, subject: 'a/b' });
    assert.equal(sly.mayPublish('devices/x/state'), false);
    assert.equal(sly.maySubscribe('devices/#'), false);
    // The deny rule with an unsafe %u denies every publish of that client.
    assert.equal(sly.mayPublish('anything'), false);
  });

  it('refuses a rule topic that is not a valid filter, naming it', () => {
    assert.throws(
      () => new TopicAuthorizer({ rules: [rule({ topics: ['a/#/b'] })], noMatch: 'allow' }),
      /authorization\.rules\[0\]\.topics\[0\]: Invalid topic filter/,
    );
  });
});
