import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as ws from 'ws';
import { parseSubprotocols } from './parse-subprotocols.js';

// ws exports its header parser from the ESM entry but @types/ws does not declare it.
const { subprotocol } = ws as unknown as { subprotocol: { parse(header: string): Set<string> } };

describe('parseSubprotocols', () => {
  it('returns [] when the header is absent', () => {
    assert.deepEqual(parseSubprotocols([]), []);
  });

  it('returns the offered names in order, across header lines', () => {
    assert.deepEqual(parseSubprotocols(['chat.v2, chat.v1', 'mqtt']), ['chat.v2', 'chat.v1', 'mqtt']);
  });

  it('is case-sensitive: names differing in case are distinct', () => {
    assert.deepEqual(parseSubprotocols(['chat, Chat']), ['chat', 'Chat']);
  });

  const malformed: readonly (readonly string[])[] = [
    [''],
    ['chat,'],
    ['chat,,mqtt'],
    ['chat mqtt'],
    ['chat/1'],
    ['"chat"'],
    ['chät'],
    ['chat, chat'],
    ['chat', 'chat'],
  ];

  for (const values of malformed) {
    it(`rejects ${JSON.stringify(values)}`, () => {
      assert.equal(parseSubprotocols(values), null);
    });
  }

  it('rejects a duplicate in a long list (Set path)', () => {
    const names = Array.from({ length: 40 }, (_, i) => `p${i}`);
    assert.equal(parseSubprotocols([names.join(', ')])?.length, 40);
    assert.equal(parseSubprotocols([[...names, 'p7'].join(', ')]), null);
  });

  it('agrees with ws on what Node would hand it (lines joined with ", ")', () => {
    const cases: readonly (readonly string[])[] = [['a, b'], ['a', 'b'], ...malformed];
    for (const values of cases) {
      let expected: string[] | null;
      try {
        expected = [...subprotocol.parse(values.join(', '))];
      } catch {
        expected = null;
      }
      assert.deepEqual(parseSubprotocols(values), expected, JSON.stringify(values));
    }
  });
});
