import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { realm, testRouter } from './testing.js';

describe('session meta API', () => {
  it('on_join and on_leave events; count, list and get', () => {
    const { join } = testRouter();
    const watcher = join();
    watcher.request([32, 1, {}, 'wamp.session.on_join']);
    watcher.request([32, 2, {}, 'wamp.session.on_leave']);
    const other = join();
    const [joined] = watcher.take();
    const info = (joined?.[4] as Record<string, unknown>[])[0];
    assert.equal(info?.['session'], other.sessionId);
    assert.equal(info?.['authrole'], 'anonymous');

    assert.deepEqual(watcher.request([48, 3, {}, 'wamp.session.count']), [50, 3, {}, [2]]);
    assert.deepEqual(watcher.request([48, 4, {}, 'wamp.session.count', [['nobody']]]), [50, 4, {}, [0]]);
    const list = watcher.request([48, 5, {}, 'wamp.session.list'])[3] as number[][];
    assert.deepEqual(new Set(list[0]), new Set([watcher.sessionId, other.sessionId]));
    const got = watcher.request([48, 6, {}, 'wamp.session.get', [other.sessionId]]);
    assert.equal((got[3] as Record<string, unknown>[])[0]?.['session'], other.sessionId);
    assert.equal(watcher.request([48, 7, {}, 'wamp.session.get', [12345]])[4], 'wamp.error.no_such_session');
    assert.equal(watcher.request([48, 8, {}, 'wamp.session.get', ['x']])[4], 'wamp.error.invalid_argument');

    other.receive([6, {}, 'wamp.close.close_realm']);
    const left = watcher.take()[0];
    assert.deepEqual((left?.[4] as unknown[]).slice(0, 1), [other.sessionId]);
    assert.deepEqual(watcher.request([48, 9, {}, 'wamp.session.count']), [50, 9, {}, [1]]);
  });

  it('realms are separate: sessions, topics and procedures', () => {
    const { join } = testRouter({ realms: [realm('realm1'), realm('realm2')] });
    const one = join('realm1');
    const two = join('realm2');
    one.request([32, 1, {}, 'com.t']);
    two.receive([16, 1, {}, 'com.t']);
    assert.deepEqual(one.take(), []);
    assert.deepEqual(two.request([48, 1, {}, 'wamp.session.count']), [50, 1, {}, [1]]);
  });
});
