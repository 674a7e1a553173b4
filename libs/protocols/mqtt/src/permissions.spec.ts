import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Principal } from '#broker/handshake';
import { Permissions } from './permissions.js';

function principal(claims: Record<string, unknown>): Principal {
  return { subject: 's', claims, carrier: 'first-message' };
}

describe('Permissions', () => {
  it('no principal or no mqtt scope: unrestricted, except publishing to $SYS', () => {
    for (const p of [null, principal({ scope: 'admin endpoint:/mqtt' })]) {
      const perms = Permissions.of(p);
      assert.equal(perms.canPublish('any/topic'), true);
      assert.equal(perms.canSubscribe('#'), true);
      assert.equal(perms.canPublish('$SYS/broker/uptime'), false);
    }
  });

  it('mqtt scopes grant exactly what they name, from scope or scopes', () => {
    const perms = Permissions.of(
      principal({ scope: 'mqtt:publish:devices/d1/#', scopes: ['mqtt:subscribe:devices/+/cmd'] }),
    );
    assert.equal(perms.canPublish('devices/d1/temp'), true);
    assert.equal(perms.canPublish('devices/d2/temp'), false);
    assert.equal(perms.canSubscribe('devices/d1/cmd'), true);
    assert.equal(perms.canSubscribe('devices/+/cmd'), true);
    assert.equal(perms.canSubscribe('devices/#'), false);
  });

  it('a subscribe-only principal may not publish at all', () => {
    const perms = Permissions.of(principal({ scope: 'mqtt:subscribe:#' }));
    assert.equal(perms.canSubscribe('a/b'), true);
    assert.equal(perms.canPublish('a/b'), false);
  });

  it('an empty scope value grants nothing', () => {
    const perms = Permissions.of(principal({ scope: 'mqtt:publish:' }));
    assert.equal(perms.canPublish('a'), false);
  });
});
