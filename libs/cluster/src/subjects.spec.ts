import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { filterToSubjects, subjectToTopic, topicToSubject } from './subjects.js';

describe('topic to subject mapping', () => {
  it('maps levels as nats-server does: / to ., . to //, an empty level to /', () => {
    assert.equal(topicToSubject('a/b/c'), 'a.b.c');
    assert.equal(topicToSubject('/a'), '/.a');
    assert.equal(topicToSubject('a//b'), 'a./.b');
    assert.equal(topicToSubject('a/'), 'a./');
    assert.equal(topicToSubject('v1.2/x'), 'v1//2.x');
  });

  it('escapes what a subject cannot hold: whitespace, control characters, a level that is * or >', () => {
    assert.equal(topicToSubject('a b/c\td'), 'a/20b.c/09d');
    assert.equal(topicToSubject('*/>/x*'), '/2A./3E.x*');
    assert.equal(topicToSubject('del\x7f'), 'del/7F');
  });

  it('is one to one: every topic comes back from its subject', () => {
    const topics = [
      'a',
      '/',
      '//',
      'a/b',
      '.',
      '..',
      'a.b/c',
      ' ',
      '/2A',
      '*',
      '>',
      'é/ü',
      '$SYS/x',
      'a//.//b',
    ];
    for (const topic of topics) {
      assert.equal(subjectToTopic(topicToSubject(topic)), topic, `round trip of ${JSON.stringify(topic)}`);
    }
    // Distinct topics, distinct subjects.
    assert.equal(new Set(topics.map(topicToSubject)).size, topics.length);
  });

  it('refuses subjects that no topic maps to', () => {
    assert.equal(subjectToTopic('a..b'), null);
    assert.equal(subjectToTopic('a/zz'), null);
    assert.equal(subjectToTopic('a/'), null);
  });

  it('maps filters: + to *, a trailing # to > plus the parent level', () => {
    assert.deepEqual(filterToSubjects('a/+/c'), ['a.*.c']);
    assert.deepEqual(filterToSubjects('a/b/#'), ['a.b', 'a.b.>']);
    assert.deepEqual(filterToSubjects('#'), ['>']);
    assert.deepEqual(filterToSubjects('+/#'), ['*', '*.>']);
    assert.deepEqual(filterToSubjects('a.b/ /#'), ['a//b./20', 'a//b./20.>']);
  });
});
