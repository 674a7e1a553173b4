import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isValidHost } from './valid-host.js';

describe('isValidHost', () => {
  it('takes names, IPv4, bracketed IPv6 and percent-encoded names, each with or without a port', () => {
    for (const host of [
      'broker.example.com',
      'broker.example.com:8080',
      '127.0.0.1:80',
      '[::1]',
      '[2001:db8::1]:443',
      '[::ffff:192.0.2.1]',
      'xn--bcher-kva.example',
      'my%2Dhost',
      'a_b.local:',
    ]) {
      assert.equal(isValidHost(host), true, host);
    }
  });

  it('refuses userinfo, paths, spaces, bad ports, unclosed brackets and an empty host', () => {
    for (const host of [
      '',
      'a b',
      'evil@broker.example.com',
      'broker.example.com/chat',
      'broker.example.com?x',
      'broker.example.com#x',
      'broker.example.com:8o',
      'broker.example.com:80:80',
      '[::1',
      '::1',
      '[::1]x',
      ':80',
      'bad%zz',
      'tab\there',
    ]) {
      assert.equal(isValidHost(host), false, host);
    }
  });
});
