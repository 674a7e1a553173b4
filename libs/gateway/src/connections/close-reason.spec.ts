import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeReason } from './close-reason.js';

const MAX = 123;

/** The longest prefix of `reason`, in whole code points, that fits in `max` UTF-8 bytes. */
function expectedCut(reason: string, max = MAX): string {
  let out = '';
  for (const char of reason) {
    if (Buffer.byteLength(out + char) > max) break;
    out += char;
  }
  return out;
}

/** No lone surrogate: encoding to UTF-8 and back gives the same string. */
function isWellFormed(text: string): boolean {
  return Buffer.from(text, 'utf8').toString('utf8') === text;
}

function assertValidCut(reason: string): void {
  const result = closeReason(reason);
  assert.ok(Buffer.byteLength(result) <= MAX, `${Buffer.byteLength(result)} bytes`);
  assert.ok(reason.startsWith(result), 'not a prefix of the reason');
  assert.ok(isWellFormed(result), `split a character: ${JSON.stringify(result.slice(-3))}`);
  assert.equal(result, expectedCut(reason), 'cut shorter than needed');
}

describe('closeReason', () => {
  it('returns short reasons unchanged', () => {
    for (const reason of ['', 'bye', 'authentication timeout', 'ünïcödé ✓ 😀']) {
      assert.equal(closeReason(reason), reason);
    }
  });

  it('returns a reason of exactly 123 bytes unchanged', () => {
    const ascii = 'a'.repeat(MAX);
    assert.equal(closeReason(ascii), ascii);
    const euros = '€'.repeat(41); // 3 bytes each
    assert.equal(Buffer.byteLength(euros), MAX);
    assert.equal(closeReason(euros), euros);
  });

  it('cuts long ASCII to its first 123 characters', () => {
    const reason = 'x'.repeat(50) + 'y'.repeat(200);
    assert.equal(closeReason(reason), reason.slice(0, MAX));
    assert.equal(closeReason('a'.repeat(MAX + 1)), 'a'.repeat(MAX));
  });

  it('cuts two-, three- and four-byte characters at a character boundary', () => {
    assert.equal(closeReason('é'.repeat(100)), 'é'.repeat(61));
    assert.equal(closeReason('€'.repeat(100)), '€'.repeat(41));
    assert.equal(closeReason('😀'.repeat(100)), '😀'.repeat(30));
  });

  it('does not leave half of a surrogate pair when the cut falls inside it', () => {
    // 120 ASCII + a 4-byte emoji + more: the emoji straddles byte 123.
    assertValidCut('a'.repeat(120) + '😀' + 'a'.repeat(5));
    assertValidCut('a'.repeat(121) + '😀' + 'tail');
    assertValidCut('a'.repeat(122) + '😀');
  });

  it('is always a maximal, well-formed prefix of at most 123 bytes', () => {
    const chars = ['é', '€', '😀', '𝄞', '中'];
    for (const char of chars) {
      for (let pad = 100; pad <= 130; pad++) {
        assertValidCut('a'.repeat(pad) + char.repeat(3) + 'b'.repeat(3));
        assertValidCut('é'.repeat(pad % 7) + 'a'.repeat(pad) + char + 'z');
      }
    }
  });
});
