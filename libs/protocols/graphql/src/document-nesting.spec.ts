import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nestingDepth } from './document-nesting.js';

describe('nestingDepth', () => {
  it('counts selections, arguments and list values alike', () => {
    assert.equal(nestingDepth('{ a }'), 1);
    assert.equal(nestingDepth('{ a(x: [[1]]) { b } }'), 4);
    assert.equal(nestingDepth(`{ a(x: ${'['.repeat(2000)}${']'.repeat(2000)}) }`), 2002);
  });

  it('skips brackets inside strings, block strings and comments', () => {
    assert.equal(nestingDepth('{ a(x: "[[[[{{{(((") }'), 2);
    assert.equal(nestingDepth('{ a(x: """ [[[ \\""" ((( """) }'), 2);
    assert.equal(nestingDepth('# [[[[[[\n{ a }'), 1);
    assert.equal(nestingDepth('{ a(x: "esc \\" [[[") }'), 2);
  });

  it('an unclosed string ends the count, and more closing than opening never goes below zero', () => {
    assert.equal(nestingDepth('{ a(x: "[[[[ '), 2);
    assert.equal(nestingDepth('}}} { a }'), 1);
  });
});
