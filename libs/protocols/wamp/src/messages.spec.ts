import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decode, withPayload } from './messages.js';

describe('WAMP message decoding', () => {
  it('decodes every client message type', () => {
    const ok = [
      [1, 'realm1', {}],
      [5, 'sig', {}],
      [3, {}, 'wamp.close.x'],
      [6, {}, 'wamp.close.x'],
      [8, 68, 1, {}, 'e', [], {}],
      [16, 1, {}, 't', [1], { a: 1 }],
      [32, 1, {}, 't'],
      [34, 1, 2],
      [48, 1, {}, 'p'],
      [49, 1, {}],
      [64, 1, {}, 'p'],
      [66, 1, 2],
      [70, 1, {}, [1]],
    ];
    for (const m of ok) assert.ok(decode(JSON.stringify(m)).ok, JSON.stringify(m));
  });

  it('reports violations without quoting the message', () => {
    const bad: [string, RegExp][] = [
      ['', /not valid JSON/],
      ['[]', /non-empty JSON array/],
      ['"x"', /non-empty JSON array/],
      ['[2, 1, {}]', /unexpected message type 2/],
      ['["1"]', /unexpected message type "1"/],
      ['[5, 42, {}]', /malformed AUTHENTICATE/],
      ['[1, "r"]', /malformed HELLO/],
      ['[16, 1, {}, "t", {}]', /malformed PUBLISH/],
      ['[16, 1, {}, "t", [], []]', /malformed PUBLISH/],
      ['[16, 0, {}, "t"]', /malformed PUBLISH/],
      ['[34, 1, 1.5]', /malformed UNSUBSCRIBE/],
      ['[70, 1, {}, [], {}, 1]', /malformed YIELD/],
    ];
    for (const [text, reason] of bad) {
      const decoded = decode(text);
      assert.ok(!decoded.ok, text);
      assert.match(decoded.problem, reason, text);
    }
    const secret = decode('[5, "hunter2", {}, "extra"]');
    assert.ok(!secret.ok && !secret.problem.includes('hunter2'));
  });

  it('appends arguments as the spec wants', () => {
    assert.deepEqual(withPayload([50, 1, {}], undefined, undefined), [50, 1, {}]);
    assert.deepEqual(withPayload([50, 1, {}], [], {}), [50, 1, {}]);
    assert.deepEqual(withPayload([50, 1, {}], undefined, { a: 1 }), [50, 1, {}, [], { a: 1 }]);
    assert.deepEqual(withPayload([50, 1, {}], [1], undefined), [50, 1, {}, [1]]);
  });
});
