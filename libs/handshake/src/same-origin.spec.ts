import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isSameOrigin } from './same-origin.js';

describe('isSameOrigin', () => {
  const cases: [string, string, boolean, boolean][] = [
    ['http://localhost:8080', 'localhost:8080', false, true],
    ['http://LOCALHOST:8080', 'localhost:8080', false, true],
    ['https://example.com', 'example.com', true, true],
    ['https://example.com', 'example.com:443', true, true],
    ['http://example.com', 'example.com:80', false, true],
    ['http://[::1]:8080', '[::1]:8080', false, true],
    ['http://example.com', 'example.com', true, false],
    ['https://example.com', 'example.com', false, false],
    ['http://localhost:8081', 'localhost:8080', false, false],
    ['https://evil.com', 'example.com', true, false],
    ['https://example.com', 'example.com:80', true, false],
    ['null', 'example.com', false, false],
    ['http://example.com/path', 'example.com', false, false],
  ];
  for (const [origin, host, secure, expected] of cases) {
    it(`${origin} against Host ${host} (${secure ? 'TLS' : 'plain'}) -> ${expected}`, () =>
      assert.equal(isSameOrigin(origin, host, secure), expected));
  }
});
