import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, redactSubprotocols, redactUrl } from './redact.js';

describe('redactUrl', () => {
  it('returns a URL without a query unchanged', () => {
    assert.equal(redactUrl('/ws'), '/ws');
    assert.equal(redactUrl('/ocpp/cp-1'), '/ocpp/cp-1');
    assert.equal(redactUrl('/a=b/c'), '/a=b/c');
    assert.equal(redactUrl(''), '');
  });

  it('replaces every query value and keeps the names in order', () => {
    assert.equal(REDACTED, '[REDACTED]');
    assert.equal(redactUrl('/ws?token=abc.def.ghi'), '/ws?token=[REDACTED]');
    assert.equal(
      redactUrl('/ws/room?token=s3cr3t&id=42&api_key=k3y'),
      '/ws/room?token=[REDACTED]&id=[REDACTED]&api_key=[REDACTED]',
    );
  });

  it('keeps a parameter without a value as it is', () => {
    assert.equal(redactUrl('/ws?debug'), '/ws?debug');
    assert.equal(redactUrl('/ws?debug&token=s3cr3t'), '/ws?debug&token=[REDACTED]');
    assert.equal(redactUrl('/ws?token=s3cr3t&debug'), '/ws?token=[REDACTED]&debug');
  });

  it('redacts an empty value too', () => {
    assert.equal(redactUrl('/ws?token='), '/ws?token=[REDACTED]');
  });

  it('keeps an empty query and empty pairs', () => {
    assert.equal(redactUrl('/ws?'), '/ws?');
    assert.equal(redactUrl('/ws?&&'), '/ws?&&');
    assert.equal(redactUrl('/ws?a=1&&b=2'), '/ws?a=[REDACTED]&&b=[REDACTED]');
  });

  it('redacts everything after the first = of a pair, whatever characters it holds', () => {
    assert.equal(redactUrl('/ws?token=a=b=c'), '/ws?token=[REDACTED]');
    assert.equal(redactUrl('/ws?token=abc#frag'), '/ws?token=[REDACTED]');
    assert.equal(redactUrl('/ws?token=abc#frag&x=1'), '/ws?token=[REDACTED]&x=[REDACTED]');
    assert.equal(redactUrl('/ws?token=a;b=c'), '/ws?token=[REDACTED]');
    assert.equal(redactUrl('/ws?token=a%26b%3Dc'), '/ws?token=[REDACTED]');
    assert.equal(redactUrl('/ws?token=a?b=c'), '/ws?token=[REDACTED]');
  });

  it('only looks at the first ? for the start of the query; an odd name is redacted whole', () => {
    assert.equal(redactUrl('/ws??token=x'), '/ws?[REDACTED]');
  });

  it('redacts bare items that could be a token, keeps short plain names', () => {
    assert.equal(
      redactUrl('/ws?eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJlc2lnbmF0dXJlc2ln'),
      '/ws?[REDACTED]',
    );
    assert.equal(redactUrl('/ws?debug'), '/ws?debug');
  });

  it('never lets a value through', () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhIn0.c2lnbmF0dXJl';
    for (const url of [
      `/ws?token=${secret}`,
      `/ws?a=1&token=${secret}&b=2`,
      `/ws?token=${secret}#x`,
      `/p/${encodeURIComponent('?')}?t=${secret}`,
    ]) {
      assert.ok(!redactUrl(url).includes(secret), url);
    }
  });
});

describe('redactSubprotocols', () => {
  it('returns undefined when the header is absent', () => {
    assert.equal(redactSubprotocols([], ['bearer.']), undefined);
  });

  it('keeps items that carry no credential', () => {
    assert.equal(redactSubprotocols(['chat.v1'], ['bearer.']), 'chat.v1');
    assert.equal(redactSubprotocols(['ocpp2.0.1, ocpp1.6'], ['bearer.']), 'ocpp2.0.1, ocpp1.6');
    assert.equal(redactSubprotocols(['chat.v1,bearer.abc'], []), 'chat.v1, bearer.abc');
  });

  it('keeps only the prefix of a credential item', () => {
    assert.equal(redactSubprotocols(['chat.v1, bearer.abc.def'], ['bearer.']), 'chat.v1, bearer.[REDACTED]');
    assert.equal(redactSubprotocols(['bearer.abc'], ['bearer.']), 'bearer.[REDACTED]');
    assert.equal(redactSubprotocols(['bearer.'], ['bearer.']), 'bearer.[REDACTED]');
  });

  it('joins several header lines and trims whitespace', () => {
    assert.equal(
      redactSubprotocols(['chat.v1', ' bearer.tok3n ,ocpp1.6', 'x.v2'], ['bearer.']),
      'chat.v1, bearer.[REDACTED], ocpp1.6, x.v2',
    );
  });

  it('handles several prefixes', () => {
    assert.equal(
      redactSubprotocols(['bearer.a1, token.b2, chat.v1, token.c3'], ['bearer.', 'token.']),
      'bearer.[REDACTED], token.[REDACTED], chat.v1, token.[REDACTED]',
    );
  });

  it('matches a prefix anywhere in an item, case-insensitively (a mistyped or malformed offer still hides the token)', () => {
    assert.equal(redactSubprotocols(['x.bearer.abc'], ['bearer.']), 'x.bearer.[REDACTED]');
    assert.equal(redactSubprotocols(['bearer'], ['bearer.']), 'bearer');
    assert.equal(redactSubprotocols(['Bearer.abc'], ['bearer.']), 'Bearer.[REDACTED]');
    assert.equal(redactSubprotocols(['chat.v1 bearer.abc'], ['bearer.']), 'chat.v1 bearer.[REDACTED]');
  });

  it('redacts items that do not look like protocol names (spaces, too long)', () => {
    assert.equal(redactSubprotocols(['chat.v1 secret-ish'], ['bearer.']), '[REDACTED]');
    assert.equal(redactSubprotocols([`chat.v1, ${'x'.repeat(80)}`], ['bearer.']), 'chat.v1, [REDACTED]');
  });

  it('never lets a credential through', () => {
    const secret = 'eyJhbGciOiJIUzI1NiJ9';
    const out = redactSubprotocols([`chat.v1, bearer.${secret}`, `auth.${secret}`], ['bearer.', 'auth.']);
    assert.ok(out !== undefined && !out.includes(secret), out);
  });
});
