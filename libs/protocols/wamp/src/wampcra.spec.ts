import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { deriveKey, signManual } from 'wampy/wampcra.js';
import { craChallenge, craKey, craSign, craVerify, decoyKey } from './wampcra.js';

// Autobahn's own helpers (CommonJS) are the reference the router must agree with.
const autobahnCra = createRequire(import.meta.url)('autobahn/lib/auth/cra.js') as {
  derive_key(secret: string, salt: string, iterations: number, keylen: number): string;
  sign(key: string, challenge: string): string;
};

describe('wampcra', () => {
  it('the challenge names the session and carries a fresh nonce', () => {
    const a = JSON.parse(craChallenge('joe', 'user', 42)) as Record<string, unknown>;
    const b = JSON.parse(craChallenge('joe', 'user', 42)) as Record<string, unknown>;
    assert.equal(a['authid'], 'joe');
    assert.equal(a['authrole'], 'user');
    assert.equal(a['authmethod'], 'wampcra');
    assert.equal(a['session'], 42);
    assert.notEqual(a['nonce'], b['nonce']);
  });

  it('signatures agree with autobahn and wampy, plain and salted', async () => {
    const challenge = craChallenge('joe', 'user', 1);
    assert.equal(craSign('s3cret', challenge), autobahnCra.sign('s3cret', challenge));
    assert.equal(craSign('s3cret', challenge), await signManual('s3cret', challenge));
    const salt = { salt: 'pepper', iterations: 100, keylen: 32 };
    const key = craKey('s3cret', salt);
    assert.equal(key, autobahnCra.derive_key('s3cret', 'pepper', 100, 32));
    assert.equal(key, await deriveKey('s3cret', 'pepper', 100, 32));
    assert.equal(craKey('s3cret'), 's3cret');
  });

  it('verifies only the right signature', () => {
    const challenge = craChallenge('joe', 'user', 1);
    assert.equal(craVerify('k', challenge, craSign('k', challenge)), true);
    assert.equal(craVerify('k', challenge, craSign('other', challenge)), false);
    assert.equal(craVerify('k', challenge, ''), false);
    assert.equal(craVerify('k', challenge, 'x'.repeat(1000)), false);
    assert.equal(craVerify(decoyKey(), challenge, craSign('k', challenge)), false);
  });
});
