import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { operationLimitsRule } from './operation-limits.rule.js';

const schema = buildSchema(`
  type Node { id: ID!, name: String, child: Node, children: [Node!]! }
  type Query { node: Node }
`);

function errors(source: string, maxDepth = 3, maxComplexity = 10): string[] {
  return validate(schema, parse(source), [
    ...specifiedRules,
    operationLimitsRule(maxDepth, maxComplexity),
  ]).map((e) => e.message);
}

describe('operationLimitsRule', () => {
  it('accepts operations at the limits', () => {
    assert.deepEqual(errors('{ node { child { id } } }'), []);
    assert.deepEqual(errors('{ node { id name child { id name child { id } } } }', 4, 8), []);
  });

  it('refuses an operation one level too deep, counting through fragments and inline fragments', () => {
    assert.deepEqual(errors('query Deep { node { child { child { id } } } }'), [
      'Operation "Deep" is nested 4 levels deep; at most 3 are allowed.',
    ]);
    assert.deepEqual(
      errors('{ node { ...F } } fragment F on Node { child { ... on Node { child { id } } } }'),
      ['The operation is nested 4 levels deep; at most 3 are allowed.'],
    );
  });

  it('refuses an operation with too many fields, counting each spread of a fragment', () => {
    assert.deepEqual(
      errors(
        '{ node { ...F ...F2 } } fragment F on Node { id name } fragment F2 on Node { a: id b: name c: id d: name e: id f: name g: id h: name }',
      ),
      ['The operation selects 11 fields; at most 10 are allowed.'],
    );
  });

  it('measures a fragment bomb quickly and refuses it', () => {
    let source = '{ node { ...F0 } } fragment F30 on Node { id }';
    for (let i = 0; i < 30; i++)
      source += ` fragment F${i} on Node { ...F${i + 1} a${i}: child { ...F${i + 1} } }`;
    const found = errors(source, 100, 1000);
    assert.equal(found.length, 1);
    assert.match(found[0] ?? '', /selects \d+ fields; at most 1000 are allowed/);
  });

  it('does not loop on fragment cycles (the standard rule reports them)', () => {
    const found = errors(
      '{ node { ...A } } fragment A on Node { child { ...B } } fragment B on Node { ...A }',
    );
    assert.ok(found.some((m) => /Cannot spread fragment "A" within itself/.test(m)));
  });

  it('measures each operation of a document on its own', () => {
    assert.deepEqual(
      errors('query A { node { id } } query B { node { child { child { child { id } } } } }'),
      ['Operation "B" is nested 5 levels deep; at most 3 are allowed.'],
    );
  });
});
