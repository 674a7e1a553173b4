import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isSameOrigin } from './same-origin.js';

describe('isSameOrigin', () => {
  const cases: [string, string, boolean][] = [
    ['http://localhost:8080', 'localhost:8080', true],
    ['http://LOCALHOST:8080', 'localhost:8080', true],
    ['https://example.com', 'example.com', true],
    ['https://example.com', 'example.com:443', true],
    ['http://example.com', 'example.com:80', true],
    ['http://[::1]:8080', '[::1]:8080', true],
    ['http://localhost:8081', 'localhost:8080', false],
    ['https://evil.com', 'example.com', false],
    ['https://example.com', 'example.com:80', false],
    ['null', 'example.com', false],
    ['http://example.com/path', 'example.com', false],
  ];
  for (const [origin, host, expected] of cases) {
    it(`${origin} against Host ${host} -> ${expected}`, () =>
      assert.equal(isSameOrigin(origin, host), expected));
  }
});
