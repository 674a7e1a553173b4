import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Principal } from '#broker/handshake';
import { Acl, type AclRuleConfig } from './acl.js';

const alice: Principal = { subject: 'alice', claims: {}, carrier: 'first-message' };

function rule(overrides: Partial<AclRuleConfig> & Pick<AclRuleConfig, 'topics'>): AclRuleConfig {
  return { who: 'all', action: 'all', permission: 'allow', ...overrides };
}

describe('Acl: topic rules from the config', () => {
  it('no rules: every client is unrestricted (null)', () => {
    assert.equal(new Acl([], 'allow').forClient('c1', null), null);
  });

  it('the first rule that applies decides; none applies: noMatch', () => {
    const acl = new Acl(
      [
        rule({ action: 'subscribe', topics: ['test/nosubscribe'], permission: 'deny' }),
        rule({ topics: ['test/#'] }),
      ],
      'deny',
    );
    const client = acl.forClient('c1', null);
    assert.ok(client);
    assert.equal(client.allows('subscribe', 'test/nosubscribe'), false);
    assert.equal(client.allows('publish', 'test/nosubscribe'), true);
    assert.equal(client.allows('subscribe', 'test/other'), true);
    assert.equal(client.allows('subscribe', 'other'), false);
  });

  it('a subscribe rule covers the filters within its own (a narrower filter, not a wider one)', () => {
    const client = new Acl([rule({ action: 'subscribe', topics: ['sensors/+/temp'] })], 'deny').forClient(
      'c1',
      null,
    );
    assert.equal(client?.allows('subscribe', 'sensors/a/temp'), true);
    assert.equal(client?.allows('subscribe', 'sensors/+/temp'), true);
    assert.equal(client?.allows('subscribe', 'sensors/#'), false);
  });

  it('who: anonymous, authenticated, one user, one client id', () => {
    const acl = new Acl(
      [
        rule({ who: 'anonymous', action: 'publish', topics: ['#'], permission: 'deny' }),
        rule({ user: 'alice', topics: ['alice/#'] }),
        rule({ clientId: 'gateway-1', topics: ['gateways/#'] }),
        rule({ who: 'authenticated', action: 'subscribe', topics: ['news/#'] }),
      ],
      'deny',
    );
    const anonymous = acl.forClient('anon-1', null);
    assert.equal(anonymous?.allows('publish', 'alice/x'), false);
    assert.equal(anonymous?.allows('subscribe', 'news/today'), false);
    const a = acl.forClient('phone', alice);
    assert.equal(a?.allows('publish', 'alice/x'), true);
    assert.equal(a?.allows('subscribe', 'news/today'), true);
    assert.equal(a?.allows('publish', 'gateways/1'), false);
    assert.equal(acl.forClient('gateway-1', null)?.allows('subscribe', 'gateways/1/#'), true);
  });

  it('%c and %u name the client’s own tree; an id or name holding / + # makes an allow rule grant nothing and a deny rule deny everything', () => {
    const acl = new Acl(
      [
        rule({ action: 'publish', topics: ['blocked/%u/#'], permission: 'deny' }),
        rule({ topics: ['devices/%c/#', 'users/%u/#'] }),
      ],
      'deny',
    );
    const device = acl.forClient('dev-7', null);
    assert.equal(device?.allows('publish', 'devices/dev-7/state'), true);
    assert.equal(device?.allows('publish', 'devices/dev-8/state'), false);
    // No user: a %u rule does not apply (neither the deny nor the allow).
    assert.equal(device?.allows('publish', 'users/x/y'), false);
    assert.equal(acl.forClient('a', alice)?.allows('subscribe', 'users/alice/#'), true);
    assert.equal(acl.forClient('a', alice)?.allows('publish', 'blocked/alice/x'), false);
    const sly = acl.forClient('#', { ...alice, subject: 'a/b' });
    assert.equal(sly?.allows('publish', 'devices/x/state'), false);
    assert.equal(sly?.allows('subscribe', 'devices/#'), false);
    // The deny rule with an unsafe %u denies every publish of that client.
    assert.equal(sly?.allows('publish', 'anything'), false);
  });

  it('refuses a rule topic that is not a valid filter, naming it', () => {
    assert.throws(
      () => new Acl([rule({ topics: ['a/#/b'] })], 'allow'),
      /mqtt\.acl\.rules\[0\]\.topics\[0\]: Invalid topic filter/,
    );
  });
});
