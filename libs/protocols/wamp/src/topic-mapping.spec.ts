import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { busFilterOf, busPayloadOf, busTopicOf, wampArgsOf, wampTopicOf } from './topic-mapping.js';

describe('WAMP <-> bus topic mapping', () => {
  it('maps components to levels', () => {
    assert.equal(busTopicOf('com.example.sensor1'), 'com/example/sensor1');
    assert.equal(wampTopicOf('com/example/sensor1', 'loose'), 'com.example.sensor1');
    assert.equal(wampTopicOf('chat/lobby', 'strict'), 'chat.lobby');
  });

  it('keeps WAMP topics with bus-significant characters and reserved topics off the bus', () => {
    for (const uri of ['a/b.c', 'a.b+c', 'wamp.session.on_join', 'a.b\u0000'])
      assert.equal(busTopicOf(uri), null, uri);
  });

  it('does not deliver bus topics whose levels are not URI components', () => {
    for (const topic of ['a//b', '/a', 'a/', 'a.b/c', 'sensor 1/x', 'wamp/x', 'a/#x', 'x'.repeat(2000)]) {
      assert.equal(wampTopicOf(topic, 'loose'), null, topic.slice(0, 20));
    }
    assert.equal(wampTopicOf('Chat/Lobby', 'strict'), null);
    assert.equal(wampTopicOf('Chat/Lobby', 'loose'), 'Chat.Lobby');
  });

  it('a subscription attracts the bus filter covering what it may receive', () => {
    assert.equal(busFilterOf('exact', 'a.b.c'), 'a/b/c');
    assert.equal(busFilterOf('wildcard', 'a..c'), 'a/+/c');
    assert.equal(busFilterOf('prefix', 'a.b'), 'a/#');
    assert.equal(busFilterOf('prefix', 'a'), '#');
    assert.equal(busFilterOf('exact', 'a/b'), null);
  });

  it('binary arguments round-trip as bytes', () => {
    const bytes = Buffer.from([0xff, 0x00, 0x41]);
    const [binary] = wampArgsOf(bytes, undefined);
    const back = busPayloadOf([binary], undefined);
    assert.deepEqual(Buffer.from(back.payload), bytes);
    assert.equal(back.contentType, 'application/octet-stream');
  });

  it('payloads: empty, one string, one value, many', () => {
    assert.deepEqual(busPayloadOf(undefined, undefined).payload.byteLength, 0);
    const text = busPayloadOf(['hi'], undefined);
    assert.equal(Buffer.from(text.payload).toString(), 'hi');
    assert.match(text.contentType, /^text\/plain/);
    const json = busPayloadOf([{ a: 1 }], {});
    assert.equal(Buffer.from(json.payload).toString(), '{"a":1}');
    assert.equal(json.contentType, 'application/json');
    assert.equal(
      Buffer.from(busPayloadOf([1, 2], { k: 3 }).payload).toString(),
      '{"args":[1,2],"kwargs":{"k":3}}',
    );
  });

  it('bus payloads become EVENT arguments: JSON parsed, text as a string, bytes as WAMP binary', () => {
    assert.deepEqual(wampArgsOf(Buffer.from('{"a":1}'), 'application/json'), [{ a: 1 }]);
    assert.deepEqual(wampArgsOf(Buffer.from('{"a":1}'), undefined), ['{"a":1}']);
    assert.deepEqual(wampArgsOf(Buffer.from('not json'), 'application/json'), ['not json']);
    assert.deepEqual(wampArgsOf(Buffer.from([0xff, 0x00]), undefined), ['\u0000/wA=']);
    assert.deepEqual(wampArgsOf(new Uint8Array(0), 'application/json'), []);
  });
});
