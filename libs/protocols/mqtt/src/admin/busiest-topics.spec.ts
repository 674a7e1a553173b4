import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_COUNTED_TOPICS, type TopicRate } from '../topic-rates.js';
import { MAX_ANSWER_TOPIC_BYTES, mergeBusiest, nodeAnswer } from './busiest-topics.js';

function rate(topic: string, messages: number, overcount = 0): TopicRate {
  return { topic, messages, overcount, perSecond: messages / 30, spanMs: 30_000 };
}

describe('mergeBusiest', () => {
  it('sums each topic over the nodes that counted it, busiest first, naming them and the missing', () => {
    const merged = mergeBusiest(
      new Map([
        ['node-b', [rate('a', 5), rate('b', 4, 1)]],
        ['node-a', [rate('b', 9, 2), rate('c', 1)]],
        ['node-c', [rate('a', 3)]],
      ]),
      ['node-e', 'node-d'],
    );
    assert.deepEqual(
      merged.topics.map((t) => [t.topic, t.messages, t.overcount, t.nodes]),
      [
        ['b', 13, 3, ['node-a', 'node-b']],
        ['a', 8, 0, ['node-b', 'node-c']],
        ['c', 1, 0, ['node-a']],
      ],
    );
    assert.ok(Math.abs((merged.topics[0]?.perSecond ?? 0) - 13 / 30) < 1e-9);
    assert.deepEqual(merged.missing, ['node-d', 'node-e']);
  });

  it('names no node on a single broker, and orders equal counts by topic', () => {
    const merged = mergeBusiest(new Map([[null, [rate('y', 2), rate('x', 2)]]]), []);
    assert.deepEqual(
      merged.topics.map((t) => [t.topic, t.nodes]),
      [
        ['x', []],
        ['y', []],
      ],
    );
  });

  it('reads at most MAX_COUNTED_TOPICS entries of a node', () => {
    const answer = Array.from({ length: MAX_COUNTED_TOPICS + 1 }, (_, i) => rate(`t${i}`, 1));
    const merged = mergeBusiest(new Map([['node-a', answer]]), []);
    assert.equal(merged.topics.length, MAX_COUNTED_TOPICS);
    assert.ok(!merged.topics.some((t) => t.topic === `t${MAX_COUNTED_TOPICS}`));
  });

  it('keeps the busiest MAX_COUNTED_TOPICS of all the nodes counted', () => {
    const half = MAX_COUNTED_TOPICS / 2;
    const answer = (prefix: string, base: number): TopicRate[] =>
      Array.from({ length: half + 10 }, (_, i) => rate(`${prefix}${i}`, base - 2 * i));
    const merged = mergeBusiest(
      new Map([
        ['node-a', answer('a', 1000)],
        ['node-b', answer('b', 999)],
      ]),
      [],
    );
    // a0 1000, b0 999, a1 998, ...: the first half of each node's entries.
    assert.equal(merged.topics.length, MAX_COUNTED_TOPICS);
    assert.deepEqual(
      merged.topics.slice(0, 3).map((t) => t.topic),
      ['a0', 'b0', 'a1'],
    );
    assert.equal(merged.topics.at(-1)?.topic, `b${half - 1}`);
  });
});

describe('nodeAnswer', () => {
  it('keeps the first topics up to MAX_ANSWER_TOPIC_BYTES as JSON quotes them, control characters 6 bytes each', () => {
    // 20 000 bytes raw, 120 002 quoted: ten pass a count of raw bytes (200 000), two the quoted one.
    const topic = (i: number): string => `${i}${'\u0001'.repeat(19_999)}`;
    const answer = nodeAnswer(Array.from({ length: 10 }, (_, i) => rate(topic(i), 10 - i)));
    assert.deepEqual(
      answer.map((r) => r.messages),
      [10, 9],
    );
    assert.ok(Buffer.byteLength(JSON.stringify(answer)) < 2 * MAX_ANSWER_TOPIC_BYTES);
  });

  it('leaves out a topic over the budget on its own and keeps the ones after it', () => {
    // MQTT's longest topic of control characters: 65 535 bytes raw, 393 212 quoted.
    const huge = '\u0001'.repeat(65_535);
    assert.ok(Buffer.byteLength(JSON.stringify(huge)) > MAX_ANSWER_TOPIC_BYTES);
    const answer = nodeAnswer([rate('a', 4), rate(huge, 3), rate('b', 2), rate('c', 1)]);
    assert.deepEqual(
      answer.map((r) => r.topic),
      ['a', 'b', 'c'],
    );
  });

  it('keeps every topic of plain names under the budget', () => {
    const answer = nodeAnswer(Array.from({ length: MAX_COUNTED_TOPICS }, (_, i) => rate(`t/${i}`, 1)));
    assert.equal(answer.length, MAX_COUNTED_TOPICS);
  });
});
