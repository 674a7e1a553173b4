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

  it('ends a string at its unescaped quote or its line, a comment at either line break', () => {
    assert.equal(nestingDepth('{ a(x: "ends \\\\" [[) }'), 4, 'an escaped backslash, then the quote');
    assert.equal(nestingDepth('{ a(x: "[[ unclosed\n[) }'), 3);
    assert.equal(nestingDepth('# [[[[\r{ a }'), 1);
    assert.equal(nestingDepth(`${'# [[[\n'.repeat(50)}{ a(x: "((" y: "{{" z: [1]) }`), 3);
    assert.equal(nestingDepth('{ a(x: """ \\\\\\""" [ """ [) }'), 3, 'the backslash right before escapes');
  });

  it('an unclosed string ends the count, and more closing than opening never goes below zero', () => {
    assert.equal(nestingDepth('{ a(x: "[[[[ '), 2);
    assert.equal(nestingDepth('}}} { a }'), 1);
  });
});
