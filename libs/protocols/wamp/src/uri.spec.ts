import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  isReserved,
  isValidComponent,
  isValidUri,
  MAX_URI_LENGTH,
  parseMatch,
  wildcardMatches,
} from './uri.js';

describe('WAMP URIs', () => {
  it('loose URIs: non-empty components without whitespace, dot or hash', () => {
    for (const ok of ['a', 'com.example.topic', 'Com.Ex-ample.x/y', 'a.b.c1', 'ü.ñ', 'a+b.c']) {
      assert.equal(isValidUri(ok, 'loose'), true, ok);
    }
    for (const bad of ['', '.a', 'a.', 'a..b', 'a b', 'a.#', 'a\tb', 'a\nb', 42, null, undefined]) {
      assert.equal(isValidUri(bad, 'loose'), false, String(bad));
    }
  });

  it('strict URIs: lower-case letters, digits and underscores only', () => {
    for (const ok of ['a', 'com.example.topic_1']) assert.equal(isValidUri(ok, 'strict'), true, ok);
    for (const bad of ['A', 'com.Example', 'a-b', 'a/b', 'ü', 'a..b']) {
      assert.equal(isValidUri(bad, 'strict'), false, bad);
    }
  });

  it('wildcard patterns allow empty components; prefix patterns do not', () => {
    for (const ok of ['a..c', '.b.', '..', 'a.b'])
      assert.equal(isValidUri(ok, 'loose', 'wildcard'), true, ok);
    assert.equal(isValidUri('a..c', 'strict', 'wildcard'), true);
    assert.equal(isValidUri('A..c', 'strict', 'wildcard'), false);
    assert.equal(isValidUri('a b..c', 'loose', 'wildcard'), false);
    assert.equal(isValidUri('a..c', 'loose', 'prefix'), false);
    assert.equal(isValidUri('com.example', 'loose', 'prefix'), true);
    assert.equal(isValidUri('com.example.', 'loose', 'prefix'), true);
    assert.equal(isValidUri('com.example.', 'loose'), false);
    assert.equal(isValidUri('.', 'loose', 'prefix'), false);
  });

  it('refuses URIs longer than the limit', () => {
    assert.equal(isValidUri('a'.repeat(MAX_URI_LENGTH), 'loose'), true);
    assert.equal(isValidUri('a'.repeat(MAX_URI_LENGTH + 1), 'loose'), false);
  });

  it('components, reserved names and match policies', () => {
    assert.equal(isValidComponent('sensor-1', 'loose'), true);
    assert.equal(isValidComponent('sensor-1', 'strict'), false);
    assert.equal(isValidComponent('', 'loose'), false);
    assert.equal(isValidComponent('a.b', 'loose'), false);
    assert.equal(isReserved('wamp.session.count'), true);
    assert.equal(isReserved('wampy.x'), false);
    assert.equal(parseMatch(undefined), 'exact');
    assert.equal(parseMatch('prefix'), 'prefix');
    assert.equal(parseMatch('regex'), null);
  });

  it('wildcard matching compares component by component', () => {
    assert.equal(wildcardMatches(['a', '', 'c'], ['a', 'b', 'c']), true);
    assert.equal(wildcardMatches(['a', '', 'c'], ['a', 'b', 'd']), false);
    assert.equal(wildcardMatches(['a', ''], ['a', 'b', 'c']), false);
    assert.equal(wildcardMatches(['', ''], ['x', 'y']), true);
  });
});
