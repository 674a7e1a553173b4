import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileAllowlist, normalizeOrigin } from './match-origin.js';

describe('normalizeOrigin', () => {
  const canonical: readonly [string, string][] = [
    ['https://app.example.com', 'https://app.example.com'],
    ['HTTPS://App.Example.COM', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://localhost:80', 'http://localhost'],
    ['ws://localhost:80', 'ws://localhost'],
    ['wss://localhost:443', 'wss://localhost'],
    ['http://localhost:443', 'http://localhost:443'],
    ['https://localhost:80', 'https://localhost:80'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
    ['http://[::1]:8080', 'http://[::1]:8080'],
    ['http://[2001:DB8::1]', 'http://[2001:db8::1]'],
    ['http://[::1]:80', 'http://[::1]'],
    ['chrome-extension://abcdefghijklmnop', 'chrome-extension://abcdefghijklmnop'],
    ['https://xn--bcher-kva.example', 'https://xn--bcher-kva.example'],
    ['null', 'null'],
  ];
  for (const [input, expected] of canonical) {
    it(`${input} -> ${expected}`, () => {
      assert.equal(normalizeOrigin(input), expected);
    });
  }

  it('returns the same string when already canonical (no allocation)', () => {
    const origin = 'https://app.example.com:8443';
    assert.equal(normalizeOrigin(origin), origin);
  });

  const invalid = [
    '',
    'NULL',
    'app.example.com',
    'https://',
    'https:/app.example.com',
    '://app.example.com',
    '1http://a.com',
    'https://app.example.com/',
    'https://app.example.com/path',
    'https://app.example.com?q',
    'https://app.example.com#f',
    'https://user@app.example.com',
    'https://user:pw@app.example.com',
    ' https://app.example.com',
    'https://app.example.com ',
    'https://app .example.com',
    'https://app..example.com',
    'https://.example.com',
    'https://example.com.',
    'https://app.example.com:',
    'https://app.example.com:0443',
    'https://app.example.com:65536',
    'https://app.example.com:123456',
    'https://app.example.com:8a',
    'https://bücher.example',
    'https://%61pp.example.com',
    'http://[::1',
    'http://[::1]x',
    'http://[1]',
    'http://[::g]',
    'https://*.example.com',
  ];
  for (const origin of invalid) {
    it(`rejects ${JSON.stringify(origin)}`, () => {
      assert.equal(normalizeOrigin(origin), null);
    });
  }
});

describe('compileAllowlist', () => {
  const matcher = compileAllowlist([
    'https://app.example.com',
    'http://localhost:3000',
    'https://*.example.org',
    'https://*.example.net:8443',
    'http://[::1]:8080',
  ]);

  const cases: readonly [string, boolean][] = [
    ['https://app.example.com', true],
    ['https://APP.example.com', true],
    ['https://app.example.com:443', true],
    ['https://app.example.com:8443', false],
    ['http://app.example.com', false],
    ['https://other.example.com', false],
    ['https://app.example.com/', false],
    ['http://localhost:3000', true],
    ['http://localhost', false],
    ['http://localhost:3001', false],
    ['https://a.example.org', true],
    ['https://a.b.example.org', true],
    ['https://A.Example.ORG:443', true],
    ['https://example.org', false],
    ['https://evil-example.org', false],
    ['https://a.evil-example.org', false],
    ['https://example.org.evil.com', false],
    ['http://a.example.org', false],
    ['https://a.example.org:8443', false],
    ['https://.example.org', false],
    ['https://a.example.net:8443', true],
    ['https://a.example.net', false],
    ['http://[::1]:8080', true],
    ['http://[::1]', false],
    ['null', false],
    ['', false],
    ['garbage', false],
  ];
  for (const [origin, expected] of cases) {
    it(`${expected ? 'allows' : 'denies'} ${JSON.stringify(origin)}`, () => {
      assert.equal(matcher.matches(origin), expected);
    });
  }

  it("allows 'null' only when listed", () => {
    assert.equal(compileAllowlist(['null']).matches('null'), true);
    assert.equal(compileAllowlist(['null']).matches('https://a.example.com'), false);
  });

  it("normalizes entries, so 'https://x:443' matches 'https://x'", () => {
    assert.equal(compileAllowlist(['HTTPS://App.Example.com:443']).matches('https://app.example.com'), true);
    assert.equal(compileAllowlist(['https://*.Example.com:443']).matches('https://a.example.com'), true);
  });

  it("'*' allows everything, including 'null' (no CSWSH protection)", () => {
    const any = compileAllowlist(['*']);
    for (const origin of ['https://evil.com', 'null', 'not an origin'])
      assert.equal(any.matches(origin), true);
  });

  it('an empty allowlist denies everything', () => {
    assert.equal(compileAllowlist([]).matches('https://app.example.com'), false);
  });

  const badEntries = [
    '',
    'app.example.com',
    '*.example.com',
    'https://app.example.com/',
    'https://*',
    'https://*.',
    'https://a.*.example.com',
    'https://*.*.example.com',
    'https://*example.com',
    'https://*.[::1]',
    ' https://app.example.com',
    'Null',
  ];
  for (const entry of badEntries) {
    it(`throws naming the bad entry ${JSON.stringify(entry)}`, () => {
      assert.throws(
        () => compileAllowlist(['https://ok.example.com', entry]),
        (err: unknown) => err instanceof Error && err.message.includes(JSON.stringify(entry)),
      );
    });
  }
});
