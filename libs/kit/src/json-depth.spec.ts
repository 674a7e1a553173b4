import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestsDeeperThan } from './json-depth.js';

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, and not brackets inside strings (escaped quotes included)', () => {
    assert.equal(nestsDeeperThan('[[[1]]]', 3), false);
    assert.equal(nestsDeeperThan('[[[[1]]]]', 3), true);
    assert.equal(nestsDeeperThan('{"a":{"b":[1]}}', 3), false);
    assert.equal(nestsDeeperThan('{"a":{"b":[{}]}}', 3), true);
    assert.equal(nestsDeeperThan(`["${'['.repeat(100)}"]`, 3), false);
    assert.equal(nestsDeeperThan(`["\\"${'['.repeat(100)}"]`, 3), false);
    assert.equal(nestsDeeperThan('[[],[],[],[]]', 2), false, 'siblings are not depth');
    assert.equal(
      nestsDeeperThan('["\\\\",[[[1]]]]', 3),
      true,
      'an escaped backslash, then the closing quote',
    );
    assert.equal(nestsDeeperThan('["\\\\\\"[[[[",1]', 3), false, 'three backslashes escape the quote');
  });

  it('reads 5,000 levels without recursion, and takes what JSON.parse would refuse (it decides validity)', () => {
    assert.equal(nestsDeeperThan('['.repeat(5000) + ']'.repeat(5000)), true);
    assert.equal(nestsDeeperThan('[{"a":'), false);
  });
});
