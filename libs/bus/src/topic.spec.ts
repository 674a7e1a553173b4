import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertTopicFilter,
  assertTopicName,
  filtersOverlap,
  filterWithin,
  InvalidTopicError,
  MAX_TOPIC_BYTES,
  topicMatches,
} from './topic.js';

/** [filter, topic, matches] — the MQTT 3.1.1 section 4.7 examples plus edge cases. */
const MATCH_TABLE: readonly (readonly [string, string, boolean])[] = [
  ['sport/tennis/player1/#', 'sport/tennis/player1', true],
  ['sport/tennis/player1/#', 'sport/tennis/player1/ranking', true],
  ['sport/tennis/player1/#', 'sport/tennis/player1/score/wimbledon', true],
  ['sport/tennis/player1/#', 'sport/tennis/player2', false],
  ['sport/#', 'sport', true],
  ['sport/#', 'sports', false],
  ['#', 'sport', true],
  ['#', 'a/b/c', true],
  ['#', '/', true],
  ['sport/tennis/+', 'sport/tennis/player1', true],
  ['sport/tennis/+', 'sport/tennis/player2', true],
  ['sport/tennis/+', 'sport/tennis/player1/ranking', false],
  ['sport/tennis/+', 'sport/tennis', false],
  ['sport/+', 'sport', false],
  ['sport/+', 'sport/', true],
  ['+', 'sport', true],
  ['+', '/sport', false],
  ['+/+', '/finance', true],
  ['/+', '/finance', true],
  ['+', '/finance', false],
  ['+/#', 'a', true],
  ['+/+/#', 'a', false],
  ['a/+/c', 'a/b/c', true],
  ['a/+/c', 'a//c', true],
  ['a//c', 'a//c', true],
  ['a//c', 'a/c', false],
  ['a/b', 'a/b/', false],
  ['a/b/', 'a/b/', true],
  ['/', '/', true],
  ['+/+', '/', true],
  ['+', '/', false],
  ['A/b', 'a/b', false],
  ['caf\u00e9/+', 'caf\u00e9/\u{1f600}', true],
  // MQTT 4.7.2: a leading wildcard never matches '$' topics, but an explicit '$' level does.
  ['#', '$SYS/monitor/Clients', false],
  ['+/monitor/Clients', '$SYS/monitor/Clients', false],
  ['+', '$SYS', false],
  ['$SYS/#', '$SYS/monitor/Clients', true],
  ['$SYS/#', '$SYS', true],
  ['$SYS/monitor/+', '$SYS/monitor/Clients', true],
  ['a/+', 'a/$b', true],
  ['a/#', 'a/$b/c', true],
];

describe('topicMatches', () => {
  for (const [filter, topic, expected] of MATCH_TABLE) {
    it(`${JSON.stringify(filter)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(topic)}`, () => {
      assert.equal(topicMatches(filter, topic), expected);
    });
  }
});

describe('assertTopicName', () => {
  it('accepts names with empty levels, spaces, $ and non-ASCII', () => {
    for (const topic of ['a', '/', '//', '/a', 'a/', 'a//b', ' ', '$SYS/x', 'caf\u00e9', '\u{1f600}/x']) {
      assert.doesNotThrow(() => assertTopicName(topic), topic);
    }
  });

  it('rejects wildcards, empty names and U+0000 with a clear message', () => {
    const cases: readonly (readonly [string, RegExp])[] = [
      ['', /^Invalid topic name "": must not be empty$/],
      ['a/+', /wildcard '\+' at index 2; wildcards are only valid in filters/],
      ['#', /wildcard '#' at index 0/],
      ['a/b#', /wildcard '#' at index 3/],
      ['a\u0000b', /^Invalid topic name "a\\u0000b": contains U\+0000 at index 1$/],
    ];
    for (const [topic, message] of cases) {
      assert.throws(
        () => assertTopicName(topic),
        (error: unknown) => {
          assert.ok(error instanceof InvalidTopicError);
          assert.equal(error.name, 'InvalidTopicError');
          assert.match(error.message, message);
          return true;
        },
      );
    }
  });

  it('rejects lone surrogates, which have no UTF-8 encoding', () => {
    assert.throws(() => assertTopicName('a\ud800'), /lone surrogate at index 1/);
    assert.throws(() => assertTopicName('\udc00b'), /lone surrogate at index 0/);
    assert.throws(() => assertTopicName('\ud800\ud800\udc00'), /lone surrogate at index 0/);
  });

  it('bounds the length in UTF-8 bytes, not UTF-16 code units', () => {
    assert.equal(MAX_TOPIC_BYTES, 65535);
    assert.doesNotThrow(() => assertTopicName('a'.repeat(65535)));
    assert.throws(() => assertTopicName('a'.repeat(65536)), /longer than 65535 UTF-8 bytes/);
    // U+00E9 is two bytes, U+20AC three, U+1F600 four (two code units).
    assert.doesNotThrow(() => assertTopicName('\u00e9'.repeat(32767) + 'a'));
    assert.throws(() => assertTopicName('\u00e9'.repeat(32768)), /is 65536 UTF-8 bytes, more than 65535/);
    assert.doesNotThrow(() => assertTopicName('\u20ac'.repeat(21845)));
    assert.throws(() => assertTopicName('\u20ac'.repeat(21845) + 'a'), /is 65536 UTF-8 bytes/);
    assert.doesNotThrow(() => assertTopicName('\u{1f600}'.repeat(16383) + 'abc'));
    assert.throws(() => assertTopicName('\u{1f600}'.repeat(16384)), /is 65536 UTF-8 bytes/);
  });

  it('keeps the error message short for long topics', () => {
    assert.throws(
      () => assertTopicName('x'.repeat(70000)),
      (error: unknown) => error instanceof InvalidTopicError && error.message.length < 200,
    );
  });
});

describe('assertTopicFilter', () => {
  it("accepts wildcards that occupy whole levels, with '#' last", () => {
    const filters = ['#', '+', '+/+', '/+', '+/', 'a/#', 'a/+/b', '+/#', '/#', '//#', 'a//+', '$SYS/#', 'a'];
    for (const filter of filters) assert.doesNotThrow(() => assertTopicFilter(filter), filter);
  });

  it('rejects misplaced wildcards with a clear message', () => {
    const cases: readonly (readonly [string, RegExp])[] = [
      ['', /^Invalid topic filter "": must not be empty$/],
      ['a/#/b', /^Invalid topic filter "a\/#\/b": wildcard '#' at index 2 must be the last level$/],
      ['#/', /wildcard '#' at index 0 must be the last level/],
      ['a#', /wildcard '#' at index 1 must occupy a whole level/],
      ['a/#b', /wildcard '#' at index 2 must occupy a whole level/],
      ['##', /wildcard '#' at index 0 must occupy a whole level/],
      ['a+', /wildcard '\+' at index 1 must occupy a whole level/],
      ['a/+b/c', /wildcard '\+' at index 2 must occupy a whole level/],
      ['++', /wildcard '\+' at index 0 must occupy a whole level/],
      ['+#', /wildcard '\+' at index 0 must occupy a whole level/],
      ['a/\u0000', /contains U\+0000 at index 2/],
      ['+/\udfff', /lone surrogate at index 2/],
    ];
    for (const [filter, message] of cases) {
      assert.throws(
        () => assertTopicFilter(filter),
        (error: unknown) => error instanceof InvalidTopicError && message.test(error.message),
        filter,
      );
    }
  });

  it('bounds the length like topic names', () => {
    assert.doesNotThrow(() => assertTopicFilter('a/'.repeat(32766) + '#'));
    assert.throws(() => assertTopicFilter('a/'.repeat(32767) + '+/#'), /longer than 65535 UTF-8 bytes/);
  });
});

describe('filterWithin and filtersOverlap', () => {
  const within: [string, string, boolean][] = [
    ['a/b', 'a/#', true],
    ['a', 'a/#', true],
    ['a/+/c', 'a/#', true],
    ['a/#', 'a/#', true],
    ['a/b', 'a/+', true],
    ['a/+', 'a/+', true],
    ['a/#', 'a/+', false],
    ['a/+', 'a/b', false],
    ['a/b/c', 'a/+', false],
    ['b/c', 'a/#', false],
    ['#', 'a/#', false],
    ['$SYS/x', '#', false],
    ['$SYS/x', '$SYS/#', true],
    ['x/y', '#', true],
  ];
  for (const [filter, outer, expected] of within) {
    it(`${filter} within ${outer}: ${expected}`, () => assert.equal(filterWithin(filter, outer), expected));
  }

  const overlaps: [string, string, boolean][] = [
    ['+/victim/#', 'devices/#', true],
    ['+/victim/#', 'devices/me/#', false],
    ['a', 'a/#', true],
    ['a/b', 'a', false],
    ['#', '$SYS/#', false],
    ['+/x', '$SYS/x', false],
    ['$SYS/#', '$SYS/+', true],
    ['a/+/c', 'a/b/+', true],
    ['a/+', 'a/+/c', false],
  ];
  for (const [a, b, expected] of overlaps) {
    it(`${a} overlaps ${b}: ${expected}`, () => {
      assert.equal(filtersOverlap(a, b), expected);
      assert.equal(filtersOverlap(b, a), expected);
    });
  }

  it('agree with topicMatches over every filter and topic of a small alphabet', () => {
    // Every topic of up to three levels over {a, b, $s, ''}, and every filter over those plus wildcards.
    const levels = ['a', 'b', '$s', ''];
    const topics: string[] = [];
    const grow = (prefix: string[], alphabet: string[], out: string[][], depth: number): void => {
      if (prefix.length > 0) out.push(prefix);
      if (depth === 0) return;
      for (const level of alphabet) grow([...prefix, level], alphabet, out, depth - 1);
    };
    const topicLevels: string[][] = [];
    grow([], levels, topicLevels, 3);
    for (const t of topicLevels) topics.push(t.join('/'));
    const filterLevels: string[][] = [];
    grow([], [...levels, '+'], filterLevels, 3);
    const filters = filterLevels.map((f) => f.join('/'));
    for (const f of filterLevels) filters.push([...f, '#'].join('/'));
    filters.push('#');
    const matched = new Map(filters.map((f) => [f, new Set(topics.filter((t) => topicMatches(f, t)))]));
    for (const a of filters) {
      const ofA = [...(matched.get(a) as Set<string>)];
      for (const b of filters) {
        const ofB = matched.get(b) as Set<string>;
        assert.equal(
          filtersOverlap(a, b),
          ofA.some((t) => ofB.has(t)),
          `${a} overlaps ${b}`,
        );
        if (a.split('/').length < 3 || !a.endsWith('#'))
          assert.equal(
            filterWithin(a, b),
            ofA.every((t) => ofB.has(t)),
            `${a} within ${b}`,
          );
      }
    }
  });
});
