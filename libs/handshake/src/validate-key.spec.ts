import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isValidWebSocketKey } from './validate-key.js';

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function roundTrips(key: string): boolean {
  return Buffer.from(key, 'base64').toString('base64') === key;
}

describe('isValidWebSocketKey', () => {
  it('accepts the RFC 6455 sample key', () => {
    assert.equal(isValidWebSocketKey('dGhlIHNhbXBsZSBub25jZQ=='), true);
  });

  it('accepts freshly encoded 16-byte nonces', () => {
    for (let i = 0; i < 256; i++) {
      const nonce = Buffer.alloc(16, i);
      nonce[0] = 255 - i;
      assert.equal(isValidWebSocketKey(nonce.toString('base64')), true);
    }
  });

  it('agrees with decode/re-encode round-tripping for every possible 22nd character', () => {
    for (const c of BASE64_ALPHABET) {
      const key = `dGhlIHNhbXBsZSBub25jZ${c}==`;
      assert.equal(isValidWebSocketKey(key), roundTrips(key), key);
    }
  });

  const invalid = [
    '',
    'dGhlIHNhbXBsZSBub25jZR==', // non-canonical: ws's regex lets this through
    'dGhlIHNhbXBsZSBub25jZQ=',
    'dGhlIHNhbXBsZSBub25jZQ===',
    'dGhlIHNhbXBsZSBub25jZQ',
    'dGhlIHNhbXBsZSBub25jZQAA',
    'dGhlIHNhbXBsZSBub25j-Q==', // base64url alphabet
    'dGhlIHNhbXBsZSBub25j_Q==',
    'dGhlIHNhbXBsZSBub25jZ Q=',
    ' dGhlIHNhbXBsZSBub25jZQ==',
    'dGhlIHNhbXBsZSBub25jZQ==\n',
    'dGhlIHNhbXBsZSBub25jZQ=A',
    'dGhlIHNhbXBsZSBub25jZSBub25jZQ==', // longer nonce
  ];
  for (const key of invalid) {
    it(`rejects ${JSON.stringify(key)}`, () => {
      assert.equal(isValidWebSocketKey(key), false);
    });
  }
});
