import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ARGS_INDEX,
  call,
  expectType,
  hello,
  publish,
  readMessage,
  readStamp,
  register,
  subscribe,
  WAMP,
  yieldResult,
} from './wamp-load-messages.js';

describe('WAMP load messages', () => {
  it('builds the basic-profile messages the load clients send', () => {
    assert.deepEqual(JSON.parse(hello('realm1', 'subscriber')), [1, 'realm1', { roles: { subscriber: {} } }]);
    assert.deepEqual(JSON.parse(subscribe(1, 'a.b')), [32, 1, {}, 'a.b']);
    assert.deepEqual(JSON.parse(publish(2, 'a.b', [3, 4.5])), [16, 2, {}, 'a.b', [3, 4.5]]);
    assert.deepEqual(JSON.parse(register(1, 'p')), [64, 1, {}, 'p']);
    assert.deepEqual(JSON.parse(call(9, 'p', [9, 1.5])), [48, 9, {}, 'p', [9, 1.5]]);
    assert.deepEqual(JSON.parse(yieldResult(7, [1])), [70, 7, {}, [1]]);
  });

  it('reads a message of the expected type and says what an ABORT or ERROR was', () => {
    assert.deepEqual(expectType(readMessage('[33,1,5]'), WAMP.SUBSCRIBED), [33, 1, 5]);
    assert.equal(
      expectType(readMessage('[3,{},"wamp.error.no_such_realm"]'), WAMP.WELCOME),
      'ABORT wamp.error.no_such_realm',
    );
    assert.equal(
      expectType(readMessage('[8,48,9,{},"wamp.error.no_such_procedure"]'), WAMP.RESULT),
      'ERROR wamp.error.no_such_procedure',
    );
    assert.equal(
      expectType(readMessage('[36,1,2,{}]'), WAMP.RESULT),
      'WAMP message type 36 where 50 was expected',
    );
    assert.equal(readMessage('{"a":1}'), 'not a WAMP message');
    assert.equal(readMessage('[1'), 'WAMP message is not JSON');
  });

  it('reads the [seq, sentAt] stamp at each type’s arguments position', () => {
    assert.deepEqual(readStamp([36, 1, 2, {}, [5, 1.25]], ARGS_INDEX[WAMP.EVENT]), {
      seq: 5,
      sentAtMs: 1.25,
    });
    assert.deepEqual(readStamp([50, 9, {}, [9, 2]], ARGS_INDEX[WAMP.RESULT]), { seq: 9, sentAtMs: 2 });
    assert.equal(readStamp([36, 1, 2, {}], 4), 'type 36 without [seq, sentAt] arguments');
    assert.equal(readStamp([36, 1, 2, {}, ['5', 1]], 4), 'type 36 with non-numeric arguments');
  });
});
