import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CallTimeoutError, ConnectionClosedError } from './call-tracker.js';
import { CallErrorResponse, InvalidResponseError, OcppError, type BadMessageReason } from './errors.js';
import { type Payload } from './rpc-frame.js';
import { OcppSchemas } from './schemas.js';
import { OcppSession, type CallDispatcher } from './ocpp-session.js';
import { ManualClock } from '#broker/kit';

const schemas = new OcppSchemas();
const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A dispatcher whose answers the test chooses per action. */
function dispatcher(
  answers: Record<string, (payload: Payload) => Promise<Payload>>,
  accepted = true,
): CallDispatcher {
  return {
    admit: (action) =>
      answers[action] === undefined
        ? new OcppError('NotSupported', `no ${action}`)
        : accepted || action === 'BootNotification'
          ? null
          : new OcppError('SecurityError', 'boot first'),
    handle: (action, payload) => (answers[action] as (p: Payload) => Promise<Payload>)(payload),
  };
}

function session(
  d: CallDispatcher,
  extra: { ready?: Promise<void>; callTimeoutMs?: number; clock?: ManualClock } = {},
) {
  const sent: unknown[][] = [];
  const bad: BadMessageReason[] = [];
  const internal: string[] = [];
  const charged: number[] = [];
  const s = new OcppSession({
    schemas,
    dispatcher: d,
    peer: { send: (text) => sent.push(JSON.parse(text) as unknown[]), charge: (ms) => charged.push(ms) },
    callTimeoutMs: extra.callTimeoutMs ?? 1000,
    maxQueuedCalls: 4,
    observer: { badMessage: (reason) => bad.push(reason), internalError: (action) => internal.push(action) },
    ...(extra.ready ? { ready: extra.ready } : {}),
    ...(extra.clock ? { clock: extra.clock } : {}),
  });
  return { s, sent, bad, internal, charged };
}

const heartbeat = async () => ({ currentTime: new Date(0).toISOString() });

/** A dispatcher whose Authorize answers when the test calls finish(); Heartbeats are answered at once. */
function slowAuthorize() {
  let finish: () => void = () => undefined;
  const d = dispatcher({
    Authorize: () =>
      new Promise((resolve) => (finish = () => resolve({ idTagInfo: { status: 'Accepted' } }))),
    Heartbeat: heartbeat,
  });
  return { d, finish: () => finish() };
}

describe('OcppSession: inbound CALLs', () => {
  it('charges the judging of a CALL that waited behind another; one its own message started, its delivery charges', async () => {
    const clock = new ManualClock();
    const { d, finish } = slowAuthorize();
    // Each admission takes 3 ms of the loop's time.
    const costly: CallDispatcher = {
      admit: (action) => (clock.advance(3), d.admit(action)),
      handle: d.handle,
    };
    const { s, sent, charged } = session(costly, { clock });
    s.receive('[2,"a","Authorize",{"idTag":"x"}]');
    s.receive('[2,"b","Heartbeat",{}]');
    assert.deepEqual(charged, [], 'the first started inside its receive');
    finish();
    await tick();
    assert.deepEqual(charged, [3], 'the second started after the first, outside any receive');
    assert.deepEqual(
      sent.map((m) => m[1]),
      ['a', 'b'],
    );
  });

  it('answers a CALL with the handler result', async () => {
    const { s, sent } = session(dispatcher({ Heartbeat: heartbeat }));
    s.receive('[2,"1","Heartbeat",{}]');
    await tick();
    assert.deepEqual(sent, [[3, '1', { currentTime: '1970-01-01T00:00:00.000Z' }]]);
  });

  it('refusals in order: NotImplemented, NotSupported, SecurityError, then the schema', async () => {
    const { s, sent, bad } = session(dispatcher({ Heartbeat: heartbeat }, false));
    s.receive('[2,"a","Brew",{}]');
    s.receive('[2,"b","Authorize",{"idTag":"x"}]');
    s.receive('[2,"c","Heartbeat",{}]');
    await tick();
    assert.deepEqual(
      sent.map((f) => f[2]),
      ['NotImplemented', 'NotSupported', 'SecurityError'],
    );
    assert.deepEqual(bad, ['unknown-action', 'unsupported-action', 'not-accepted']);
    const open = session(dispatcher({ Heartbeat: heartbeat }));
    open.s.receive('[2,"d","Heartbeat",{"x":1}]');
    await tick();
    assert.deepEqual(open.sent[0]?.slice(0, 3), [4, 'd', 'FormationViolation']);
  });

  it('an OcppError from a handler leaves as that CALLERROR; anything else as InternalError without detail', async () => {
    const { s, sent, internal } = session(
      dispatcher({
        Authorize: async () => {
          throw new OcppError('GenericError', 'not today');
        },
        Heartbeat: async () => {
          throw new Error('database file is locked');
        },
      }),
    );
    s.receive('[2,"a","Authorize",{"idTag":"x"}]');
    s.receive('[2,"b","Heartbeat",{}]');
    await tick();
    assert.deepEqual(sent[0], [4, 'a', 'GenericError', 'not today', {}]);
    assert.deepEqual(sent[1]?.slice(0, 3), [4, 'b', 'InternalError']);
    assert.doesNotMatch(String(sent[1]?.[3]), /locked/);
    assert.deepEqual(internal, ['Heartbeat']);
  });

  it('a handler answer that fails the confirmation schema is our fault: InternalError', async () => {
    const { s, sent } = session(dispatcher({ Heartbeat: async () => ({ currentTime: 'noon' }) }));
    s.receive('[2,"a","Heartbeat",{}]');
    await tick();
    assert.equal(sent[0]?.[2], 'InternalError');
  });

  it('a handler that does not finish in time: InternalError sent, later CALLs still wait their turn', async () => {
    const { d, finish } = slowAuthorize();
    const clock = new ManualClock();
    const { s, sent, internal } = session(d, { callTimeoutMs: 10, clock });
    s.receive('[2,"slow","Authorize",{"idTag":"x"}]');
    s.receive('[2,"next","Heartbeat",{}]');
    await tick();
    clock.advance(9);
    assert.deepEqual(sent, []);
    clock.advance(1);
    assert.deepEqual(
      sent.map((f) => [f[1], f[2]]),
      [['slow', 'InternalError']],
    );
    assert.deepEqual(internal, ['Authorize']);
    finish();
    await tick();
    await tick();
    assert.deepEqual(
      sent.map((f) => [f[0], f[1]]),
      [
        [4, 'slow'],
        [3, 'next'],
      ],
    );
  });

  it("each CALL gets its whole time, counted from its own start, not from the timer's", async () => {
    const { d, finish } = slowAuthorize();
    const clock = new ManualClock();
    const { s, sent, internal } = session(d, { callTimeoutMs: 1000, clock });
    s.receive('[2,"quick","Heartbeat",{}]');
    await tick();
    clock.advance(600);
    s.receive('[2,"slow","Authorize",{"idTag":"x"}]');
    await tick();
    clock.advance(650);
    assert.deepEqual(
      sent.map((f) => [f[0], f[1]]),
      [[3, 'quick']],
      'the timer armed by the first CALL has fired; the second still has time',
    );
    clock.advance(349);
    assert.equal(sent.length, 1, 'the CALL has 1 ms left');
    clock.advance(1);
    assert.deepEqual(
      sent.map((f) => [f[0], f[1], f[2]]),
      [
        [3, 'quick', sent[0]?.[2]],
        [4, 'slow', 'InternalError'],
      ],
    );
    assert.deepEqual(internal, ['Authorize']);
    finish();
  });

  it('an id still in progress is a ProtocolError; once answered or refused, the id may come again', async () => {
    const { d, finish } = slowAuthorize();
    const { s, sent, bad } = session(d);
    s.receive('[2,"a","Authorize",{"idTag":"x"}]');
    s.receive('[2,"a","Heartbeat",{}]');
    await tick();
    assert.deepEqual(sent, [[4, 'a', 'ProtocolError', 'A CALL with id a is already in progress.', {}]]);
    assert.deepEqual(bad, ['duplicate-id']);
    finish();
    await tick();
    // Each on an idle queue, where a CALL starts (and a refusal ends) within receive().
    s.receive('[2,"a","Heartbeat",{}]');
    await tick();
    s.receive('[2,"b","Heartbeat",{"x":1}]');
    await tick();
    s.receive('[2,"b","Heartbeat",{}]');
    await tick();
    assert.deepEqual(
      sent.slice(1).map((f) => [f[0], f[1], typeof f[2] === 'string' ? f[2] : 'result']),
      [
        [3, 'a', 'result'],
        [3, 'a', 'result'],
        [4, 'b', 'FormationViolation'],
        [3, 'b', 'result'],
      ],
    );
  });

  it('an id waiting in the queue is a ProtocolError too, and free again once its CALL is answered', async () => {
    const { d, finish } = slowAuthorize();
    const { s, sent, bad } = session(d);
    s.receive('[2,"a","Authorize",{"idTag":"x"}]');
    s.receive('[2,"b","Heartbeat",{}]');
    s.receive('[2,"c","Heartbeat",{}]');
    s.receive('[2,"b","Heartbeat",{}]');
    await tick();
    assert.deepEqual(sent, [[4, 'b', 'ProtocolError', 'A CALL with id b is already in progress.', {}]]);
    assert.deepEqual(bad, ['duplicate-id']);
    finish();
    await tick();
    s.receive('[2,"b","Heartbeat",{}]');
    s.receive('[2,"c","Heartbeat",{}]');
    await tick();
    assert.deepEqual(
      sent.slice(1).map((f) => [f[0], f[1]]),
      [
        [3, 'a'],
        [3, 'b'],
        [3, 'c'],
        [3, 'b'],
        [3, 'c'],
      ],
    );
    assert.deepEqual(bad, ['duplicate-id']);
  });

  it('past the queue bound a CALL gets GenericError and the queued ones are still answered', async () => {
    const { d, finish } = slowAuthorize();
    const { s, sent, bad } = session(d);
    s.receive('[2,"slow","Authorize",{"idTag":"x"}]');
    for (let i = 1; i <= 5; i++) s.receive(`[2,"q${i}","Heartbeat",{}]`);
    await tick();
    assert.deepEqual(
      sent.map((f) => f.slice(0, 3)),
      [[4, 'q5', 'GenericError']],
    );
    assert.deepEqual(bad, ['busy']);
    finish();
    await tick();
    s.receive('[2,"q5","Heartbeat",{}]');
    await tick();
    assert.deepEqual(
      sent.slice(1).map((f) => [f[0], f[1]]),
      [
        [3, 'slow'],
        [3, 'q1'],
        [3, 'q2'],
        [3, 'q3'],
        [3, 'q4'],
        [3, 'q5'],
      ],
    );
  });

  it('CALLs wait for `ready` and run one at a time in arrival order', async () => {
    let open: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (open = resolve));
    const order: string[] = [];
    const { s, sent } = session(
      dispatcher({
        Heartbeat: async () => {
          order.push('hb');
          return { currentTime: new Date(0).toISOString() };
        },
        Authorize: async (p) => {
          order.push(String(p['idTag']));
          await tick();
          return { idTagInfo: { status: 'Accepted' } };
        },
      }),
      { ready },
    );
    s.receive('[2,"1","Authorize",{"idTag":"first"}]');
    s.receive('[2,"2","Heartbeat",{}]');
    await tick();
    assert.deepEqual(sent, []);
    open();
    await tick();
    await tick();
    await tick();
    assert.deepEqual(order, ['first', 'hb']);
    assert.deepEqual(
      sent.map((f) => f[1]),
      ['1', '2'],
    );
  });

  it('malformed frames: answered where an id is known, counted always', () => {
    const { s, sent, bad } = session(dispatcher({}));
    s.receive('[2,"x","Heartbeat"');
    s.receive('nope');
    s.receive('[9]');
    s.receive('[3,"unknown",{}]');
    assert.deepEqual(
      sent.map((f) => [f[1], f[2]]),
      [['x', 'FormationViolation']],
    );
    assert.deepEqual(bad, ['invalid-json', 'invalid-json', 'unknown-type', 'unknown-response-id']);
  });
});

describe('OcppSession: our CALLs', () => {
  it('validates before sending: an invalid payload is refused and nothing goes out', async () => {
    const { s, sent } = session(dispatcher({}));
    await assert.rejects(s.call('Reset', { type: 'Warm' }), (err: Error) => err instanceof OcppError);
    assert.deepEqual(sent, []);
  });

  it('resolves with a valid CALLRESULT, rejects on CALLERROR or an invalid answer', async () => {
    const { s, sent, bad } = session(dispatcher({}));
    const reset = s.call('Reset', { type: 'Soft' });
    const [, id] = sent[0] as [number, string];
    s.receive(JSON.stringify([3, id, { status: 'Accepted' }]));
    assert.deepEqual(await reset, { status: 'Accepted' });

    const clear = s.call('ClearCache', {});
    s.receive(JSON.stringify([4, sent[1]?.[1], 'NotSupported', 'no cache', {}]));
    await assert.rejects(
      clear,
      (err: Error) => err instanceof CallErrorResponse && err.code === 'NotSupported',
    );

    const unlock = s.call('UnlockConnector', { connectorId: 1 });
    s.receive(JSON.stringify([3, sent[2]?.[1], { status: 'Open' }]));
    await assert.rejects(unlock, InvalidResponseError);
    assert.deepEqual(bad, ['invalid-response']);
  });

  it('a timeout and a closed connection reject the pending calls', async () => {
    const clock = new ManualClock();
    const { s } = session(dispatcher({}), { callTimeoutMs: 10, clock });
    const timedOut = s.call('ClearCache', {});
    clock.advance(10);
    await assert.rejects(timedOut, CallTimeoutError);
    const pending = s.call('ClearCache', {});
    s.closed();
    await assert.rejects(pending, ConnectionClosedError);
  });
});
