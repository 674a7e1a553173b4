import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Permissions } from './permissions.js';
import { realm, testRouter } from './testing.js';

describe('dealer', () => {
  it('REGISTER, CALL, INVOCATION, YIELD, RESULT', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    const [, , registration] = callee.request([64, 1, {}, 'com.add']);
    caller.receive([48, 10, {}, 'com.add', [2, 3], { round: true }]);
    const [invocation] = callee.take() as [unknown[]];
    assert.deepEqual(invocation.slice(2), [registration, {}, [2, 3], { round: true }]);
    callee.receive([70, invocation[1], {}, [5]]);
    assert.deepEqual(caller.take(), [[50, 10, {}, [5]]]);
  });

  it('no_such_procedure, procedure_already_exists, unregister, no_such_registration', () => {
    const { join } = testRouter();
    const a = join();
    const b = join();
    assert.equal(a.request([48, 1, {}, 'com.none'])[4], 'wamp.error.no_such_procedure');
    const registered = a.request([64, 2, {}, 'com.p']);
    assert.equal(b.request([64, 3, {}, 'com.p'])[4], 'wamp.error.procedure_already_exists');
    assert.equal(b.request([66, 4, registered[2]])[4], 'wamp.error.no_such_registration');
    assert.deepEqual(a.request([66, 5, registered[2]]), [67, 5]);
    assert.equal(b.request([64, 6, {}, 'com.p'])[0], 65);
    assert.equal(a.request([64, 7, {}, 'wamp.session.count'])[4], 'wamp.error.invalid_uri');
  });

  it('ERROR from the callee reaches the caller unchanged', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.fail']);
    caller.receive([48, 2, {}, 'com.fail']);
    const [invocation] = callee.take() as [unknown[]];
    callee.receive([8, 68, invocation[1], { why: 1 }, 'com.error.nope', ['a'], { b: 2 }]);
    assert.deepEqual(caller.take(), [[8, 48, 2, { why: 1 }, 'com.error.nope', ['a'], { b: 2 }]]);
  });

  it('progressive results go to callers that asked for them', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.stream']);
    caller.receive([48, 2, { receive_progress: true }, 'com.stream']);
    const [invocation] = callee.take() as [unknown[]];
    assert.deepEqual(invocation[3], { receive_progress: true });
    callee.receive([70, invocation[1], { progress: true }, [1]]);
    callee.receive([70, invocation[1], { progress: true }, [2]]);
    callee.receive([70, invocation[1], {}, [3]]);
    assert.deepEqual(caller.take(), [
      [50, 2, { progress: true }, [1]],
      [50, 2, { progress: true }, [2]],
      [50, 2, {}, [3]],
    ]);
  });

  it('caller identification when disclosed', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.who']);
    caller.receive([48, 2, { disclose_me: true }, 'com.who']);
    const details = callee.take()[0]?.[3] as Record<string, unknown>;
    assert.equal(details['caller'], caller.sessionId);
    assert.equal(details['caller_authrole'], 'anonymous');
  });

  it('cancel modes: skip, killnowait, kill', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.slow']);
    const call = (request: number): number => {
      caller.receive([48, request, {}, 'com.slow']);
      return callee.take()[0]?.[1] as number;
    };
    const skipped = call(1);
    caller.receive([49, 1, { mode: 'skip' }]);
    assert.deepEqual(callee.take(), [], 'skip does not interrupt the callee');
    assert.equal(caller.take()[0]?.[4], 'wamp.error.canceled');
    callee.receive([70, skipped, {}, ['late']]);
    assert.deepEqual(caller.take(), [], 'the late result is dropped');
    assert.equal(callee.closedWith, null, 'and is no protocol violation');

    const killedNoWait = call(2);
    caller.receive([49, 2, {}]);
    assert.deepEqual(callee.take(), [
      [69, killedNoWait, { mode: 'killnowait', reason: 'wamp.error.canceled' }],
    ]);
    assert.equal(caller.take()[0]?.[4], 'wamp.error.canceled');

    const killed = call(3);
    caller.receive([49, 3, { mode: 'kill' }]);
    assert.deepEqual(callee.take(), [[69, killed, { mode: 'kill' }]]);
    assert.deepEqual(caller.take(), [], 'kill waits for the callee');
    callee.receive([8, 68, killed, {}, 'wamp.error.canceled', ['stopped']]);
    assert.deepEqual(caller.take(), [[8, 48, 3, {}, 'wamp.error.canceled', ['stopped']]]);
  });

  it('a callee without call_canceling is never interrupted', () => {
    const { join } = testRouter();
    const callee = join('realm1', { callee: {} });
    const caller = join();
    callee.request([64, 1, {}, 'com.plain']);
    caller.receive([48, 2, {}, 'com.plain']);
    callee.take();
    caller.receive([49, 2, { mode: 'kill' }]);
    assert.deepEqual(callee.take(), []);
    assert.equal(caller.take()[0]?.[4], 'wamp.error.canceled');
  });

  it('call timeout interrupts the callee and answers wamp.error.timeout', () => {
    const { join, clock } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.slow']);
    caller.receive([48, 2, { timeout: 500 }, 'com.slow']);
    const invocation = callee.take()[0]?.[1];
    clock.advance(499);
    assert.deepEqual(caller.take(), []);
    clock.advance(1);
    assert.equal(caller.take()[0]?.[4], 'wamp.error.timeout');
    assert.deepEqual(callee.take(), [[69, invocation, { mode: 'killnowait', reason: 'wamp.error.timeout' }]]);
    caller.receive([48, 3, { timeout: 500 }, 'com.slow']);
    callee.receive([70, callee.take()[0]?.[1], {}, ['in time']]);
    assert.equal(clock.pending, 0, 'a finished call cancels its timer');
    for (const ignored of [0, -5, 1.5, '100', 2 ** 31]) {
      caller.receive([48, 4, { timeout: ignored }, 'com.slow']);
      assert.equal(clock.pending, 0, `no timer for ${String(ignored)}`);
      callee.receive([70, callee.take()[0]?.[1], {}]);
      caller.take();
    }
  });

  it('limits calls in flight per caller and per callee, and registrations per session', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.slow']);
    caller.receive([48, 1, {}, 'com.slow']);
    caller.receive([48, 2, {}, 'com.slow']);
    assert.equal(caller.request([48, 3, {}, 'com.slow'])[4], 'broker.error.limit_exceeded');
    assert.equal(join().request([48, 1, {}, 'com.slow'])[4], 'broker.error.limit_exceeded');
    for (let i = 2; i <= 3; i++) callee.request([64, i, {}, `com.r${i}`]);
    assert.equal(callee.request([64, 9, {}, 'com.r9'])[4], 'broker.error.limit_exceeded');
  });

  it('a CALL reusing a request ID in flight is a protocol violation', () => {
    const { join } = testRouter();
    join().request([64, 1, {}, 'com.slow']);
    const caller = join();
    caller.receive([48, 1, {}, 'com.slow']);
    caller.receive([48, 1, {}, 'com.slow']);
    assert.equal(caller.take()[0]?.[2], 'wamp.error.protocol_violation');
    assert.equal(caller.closedWith?.code, 1002);
  });

  it('when a callee leaves, its callers get canceled; when a caller leaves, the callee is interrupted', () => {
    const { join } = testRouter();
    const callee = join();
    const caller = join();
    callee.request([64, 1, {}, 'com.slow']);
    caller.receive([48, 1, {}, 'com.slow']);
    callee.take();
    callee.receive([6, {}, 'wamp.close.close_realm']);
    assert.equal(caller.take()[0]?.[4], 'wamp.error.canceled');
    assert.equal(caller.request([48, 2, {}, 'com.slow'])[4], 'wamp.error.no_such_procedure');

    const callee2 = join();
    callee2.request([64, 1, {}, 'com.slow']);
    caller.receive([48, 3, {}, 'com.slow']);
    const invocation = callee2.take()[0]?.[1];
    caller.protocol.closed();
    assert.deepEqual(callee2.take(), [
      [69, invocation, { mode: 'killnowait', reason: 'wamp.error.canceled' }],
    ]);
    callee2.receive([70, invocation, {}, ['nobody listens']]);
    assert.equal(callee2.closedWith, null);
  });
  it('a canceled call frees the callee; a late answer to any settled invocation is dropped, however many', () => {
    const { join } = testRouter();
    const callee = join('realm1', { callee: {} });
    const caller = join();
    callee.request([64, 1, {}, 'com.hang']);
    const invocations: unknown[] = [];
    // More cancellations than maxPendingCallsPerSession (2): none of their late answers is forgotten.
    for (let request = 1; request <= 6; request++) {
      caller.receive([48, request, {}, 'com.hang']);
      invocations.push(callee.take()[0]?.[1]);
      caller.receive([49, request, { mode: 'skip' }]);
      assert.equal(caller.take().at(-1)?.[4], 'wamp.error.canceled', 'under the limit of 2 each time');
    }
    callee.receive([70, invocations[5], { progress: true }, ['late progress']]);
    callee.receive([70, invocations[5], {}, ['late']]);
    callee.receive([8, 68, invocations[1], {}, 'com.error.late']);
    callee.receive([70, invocations[0], {}, ['oldest']]);
    assert.deepEqual(caller.take(), []);
    assert.equal(callee.closedWith, null, 'a caller cannot get the callee thrown out');
    callee.receive([70, 1000, {}, ['never invoked']]);
    assert.match(
      (callee.take().at(-1)?.[1] as { message: string }).message,
      /YIELD for unknown invocation 1000/,
    );
  });

  it('a pattern registration gets only the calls its callee may register itself', () => {
    const roles = new Map([
      [
        'anonymous',
        new Permissions([
          { uri: 'com.public.secret.', match: 'prefix', allow: ['call'] },
          { uri: 'com.public.', match: 'prefix', allow: ['call', 'register'] },
        ]),
      ],
      ['authenticated', new Permissions([{ uri: '', match: 'prefix', allow: ['call', 'register'] }])],
    ]);
    const { join } = testRouter({ realms: [realm('locked', { roles })] });
    const catcher = join('locked');
    const caller = join('locked');
    assert.equal(catcher.request([64, 1, {}, 'com.public.secret.key'])[4], 'wamp.error.not_authorized');
    assert.equal(catcher.request([64, 2, { match: 'prefix' }, 'com.public.'])[0], 65);
    assert.equal(
      caller.request([48, 3, {}, 'com.public.secret.key', ['password']])[4],
      'wamp.error.no_such_procedure',
    );
    assert.deepEqual(catcher.take(), [], 'the pattern callee never saw the call');
    caller.receive([48, 4, {}, 'com.public.time']);
    assert.equal(catcher.take()[0]?.[0], 68, 'a call it may register still reaches it');
  });

  it('wildcard registrations: the one with the most components before its first wildcard wins', () => {
    const { join } = testRouter();
    const broad = join();
    const narrow = join();
    const caller = join();
    broad.request([64, 1, { match: 'wildcard' }, 'a1...d4']);
    narrow.request([64, 2, { match: 'wildcard' }, 'a1.b2..d4']);
    caller.receive([48, 3, {}, 'a1.b2.c3.d4']);
    assert.deepEqual([broad.take().length, narrow.take()[0]?.[0]], [0, 68]);
    caller.receive([48, 4, {}, 'a1.x.c3.d4']);
    assert.equal(broad.take()[0]?.[0], 68);
  });
});
