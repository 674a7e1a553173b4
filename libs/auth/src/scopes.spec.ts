import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scopesOf, scopeValues } from './scopes.js';

const principal = (claims: Record<string, unknown>) => ({ subject: 's', claims, carrier: 'header' as const });

describe('scopesOf', () => {
  it('reads a space-separated scope claim and a scopes array together', () => {
    assert.deepEqual(
      scopesOf(principal({ scope: 'admin  endpoint:/mqtt', scopes: ['mqtt:publish:a/#', 3] })),
      ['admin', 'endpoint:/mqtt', 'mqtt:publish:a/#'],
    );
  });

  it('gives nothing for an anonymous connection or a principal without scopes', () => {
    assert.deepEqual(scopesOf(null), []);
    assert.deepEqual(scopesOf(principal({ scope: 42 })), []);
  });
});

describe('scopeValues', () => {
  it('strips the family prefix and keeps values that contain colons', () => {
    assert.deepEqual(scopeValues(['bus:publish:a/+', 'bus:subscribe:b', 'bus:publish:c:d'], 'bus:publish'), [
      'a/+',
      'c:d',
    ]);
  });
});
