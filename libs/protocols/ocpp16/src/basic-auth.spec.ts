import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { basicPassword } from './basic-auth.js';

const header = (raw: Buffer | string) => `Basic ${Buffer.from(raw).toString('base64')}`;

describe('basicPassword', () => {
  it('returns the password bytes after the identity, colons in the identity included', () => {
    assert.deepEqual(
      basicPassword([header('CP:01:key:with:colons')], 'CP:01'),
      Buffer.from('key:with:colons'),
    );
    assert.deepEqual(basicPassword([header('CP-1:')], 'CP-1'), Buffer.alloc(0));
  });

  it('keeps bytes that are not UTF-8', () => {
    const raw = Buffer.concat([Buffer.from('CP-1:'), Buffer.from([0xff, 0x00, 0xfe])]);
    assert.deepEqual(basicPassword([header(raw)], 'CP-1'), Buffer.from([0xff, 0x00, 0xfe]));
  });

  it('null for another user, a missing, repeated or malformed header', () => {
    assert.equal(basicPassword([header('CP-2:key')], 'CP-1'), null);
    assert.equal(basicPassword([header('CP-1key')], 'CP-1'), null);
    assert.equal(basicPassword([], 'CP-1'), null);
    assert.equal(basicPassword([header('CP-1:a'), header('CP-1:a')], 'CP-1'), null);
    assert.equal(basicPassword(['Bearer abc'], 'CP-1'), null);
    assert.equal(basicPassword(['Basic !!!'], 'CP-1'), null);
  });

  it('the scheme is case-insensitive', () => {
    assert.deepEqual(
      basicPassword([`basic ${Buffer.from('CP-1:k').toString('base64')}`], 'CP-1'),
      Buffer.from('k'),
    );
  });
});
