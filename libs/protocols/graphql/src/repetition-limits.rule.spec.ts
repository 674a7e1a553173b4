import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSchema, parse, validate } from 'graphql';
import { repetitionLimitsRule } from './repetition-limits.rule.js';

const schema = buildSchema(`
  type Node { id: ID!, name: String, child: Node }
  type Query { node: Node }
`);

function errors(source: string, maxAliases = 3, maxRepeated = 2): string[] {
  return validate(schema, parse(source), [repetitionLimitsRule(maxAliases, maxRepeated)]).map(
    (e) => e.message,
  );
}

describe('repetitionLimitsRule', () => {
  it('accepts a document at the limits', () => {
    assert.deepEqual(errors('{ a: node { id } b: node { id } c: node { name name } }'), []);
  });

  it('refuses one aliased field too many, counted over the whole document', () => {
    assert.deepEqual(errors('{ a: node { id } b: node { x: id } c: node { id } d: node { id } }'), [
      'The document uses more than 3 aliases.',
    ]);
  });

  it('refuses one response name selected too often in one selection set, aliased or not', () => {
    assert.deepEqual(errors('{ node { id id id } }'), [
      'The document selects "id" more than 2 times in one selection set.',
    ]);
    assert.deepEqual(errors('{ x: node { id } x: node { id } x: node { id } }', 10), [
      'The document selects "x" more than 2 times in one selection set.',
    ]);
  });

  it('the same name in different selection sets is not repetition', () => {
    assert.deepEqual(errors('{ node { id child { id child { id } } } }'), []);
  });

  it('reports once, however much a document repeats', () => {
    assert.equal(errors(`{ ${'a: node { id } '.repeat(800)} }`, 3, 2).length, 1);
  });
});
