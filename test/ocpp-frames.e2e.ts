import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ocpp16Module } from '#broker/protocols/ocpp16';
import { BrokerStore } from '#broker/store';
import type WebSocket from 'ws';
import {
  counter,
  exchange,
  nextFrame,
  nextFrames,
  OCPP_ENDPOINT,
  rawBoot,
  rawChargePoint,
} from './support/ocpp.js';
import { startTestBroker, type TestBroker } from './support/test-broker.js';
import { closed } from './support/ws-helpers.js';

const HEARTBEAT = (id: string) => JSON.stringify([2, id, 'Heartbeat', {}]);
/** A CALL answered only after the store has written it. */
const STATUS = (id: string) =>
  JSON.stringify([
    2,
    id,
    'StatusNotification',
    { connectorId: 1, errorCode: 'NoError', status: 'Available' },
  ]);

/** The CALLERROR for `id`, checked to be one, as [code, description]. */
function callError(frame: unknown[], id: string): [string, string] {
  assert.equal(frame[0], 4, `expected a CALLERROR, got ${JSON.stringify(frame)}`);
  assert.equal(frame[1], id);
  assert.equal(frame.length, 5);
  assert.equal(typeof frame[4], 'object');
  return [frame[2] as string, frame[3] as string];
}

/** After a message that must get no answer: the next frame is the answer to a Heartbeat sent after it. */
async function unanswered(ws: WebSocket, text: string, probeId: string): Promise<void> {
  const next = nextFrame(ws);
  ws.send(text);
  ws.send(HEARTBEAT(probeId));
  const frame = await next;
  assert.deepEqual([frame[0], frame[1]], [3, probeId], `expected no answer, got ${JSON.stringify(frame)}`);
}

describe('ocpp1.6 over raw frames: malformed input and every error code', () => {
  let broker: TestBroker;
  let http: string;
  let ws: WebSocket;
  let bystander: WebSocket;
  const bystanderFrames: string[] = [];

  before(async () => {
    broker = await startTestBroker({ endpoints: [OCPP_ENDPOINT], ocpp: { maxQueuedCalls: 2 } }, [
      Ocpp16Module,
    ]);
    http = broker.url.replace(/^ws/, 'http');
    bystander = await rawChargePoint(broker.url, 'CP-bystander');
    await rawBoot(bystander);
    bystander.on('message', (data: Buffer) => bystanderFrames.push(data.toString()));
    ws = await rawChargePoint(broker.url, 'CP-raw');
  });
  after(async () => {
    ws.close();
    bystander.close();
    await broker.close();
  });

  it('a CALL before an accepted BootNotification gets SecurityError', async () => {
    assert.deepEqual(callError(await exchange(ws, HEARTBEAT('early')), 'early')[0], 'SecurityError');
    const before = await counter(http, 'broker_ocpp_bad_messages_total', 'reason="not-accepted"');
    assert.equal(before, 1);
    await rawBoot(ws);
    assert.equal((await exchange(ws, HEARTBEAT('hb')))[0], 3);
  });

  it('invalid JSON: FormationViolation when the CALL id can be read, silence otherwise; both counted', async () => {
    const [code, description] = callError(await exchange(ws, '[2, "broken-1", "Heartbeat", {'), 'broken-1');
    assert.equal(code, 'FormationViolation');
    assert.match(description, /not valid JSON/);
    await unanswered(ws, '{{{ not json', 'after-junk');
    await unanswered(ws, '', 'after-empty');
    assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="invalid-json"'), 3);
  });

  it('JSON that is not an OCPP-J array gets no answer and is counted', async () => {
    await unanswered(ws, '{"type":"Heartbeat"}', 'after-object');
    await unanswered(ws, '[]', 'after-empty-array');
    await unanswered(ws, '["2", "x", "Heartbeat", {}]', 'after-string-type');
    assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="not-a-frame"'), 3);
  });

  it('unknown message type numbers are ignored', async () => {
    await unanswered(ws, '[5, "x", "Heartbeat", {}]', 'after-type-5');
    await unanswered(ws, '[7]', 'after-type-7');
    assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="unknown-type"'), 2);
  });

  it('message ids: over 36 characters or not a string -> ProtocolError where the CALL id is known', async () => {
    const long = 'x'.repeat(37);
    assert.equal(callError(await exchange(ws, HEARTBEAT(long)), long)[0], 'ProtocolError');
    assert.equal((await exchange(ws, HEARTBEAT('y'.repeat(36))))[0], 3, '36 characters are fine');
    await unanswered(ws, '[2, 17, "Heartbeat", {}]', 'after-number-id');
    await unanswered(ws, '[2, "", "Heartbeat", {}]', 'after-empty-id');
    assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="bad-message-id"'), 3);
  });

  it('a CALL of the wrong shape -> ProtocolError', async () => {
    assert.equal(callError(await exchange(ws, '[2, "short", "Heartbeat"]'), 'short')[0], 'ProtocolError');
    assert.equal(callError(await exchange(ws, '[2, "num", 12, {}]'), 'num')[0], 'ProtocolError');
  });

  it('an unknown action -> NotImplemented; a 1.6 action we do not handle -> NotSupported', async () => {
    assert.equal(callError(await exchange(ws, '[2, "u", "BrewCoffee", {}]'), 'u')[0], 'NotImplemented');
    const firmware = JSON.stringify([2, 'f', 'FirmwareStatusNotification', { status: 'Idle' }]);
    assert.equal(callError(await exchange(ws, firmware), 'f')[0], 'NotSupported');
    const reset = JSON.stringify([2, 'r', 'Reset', { type: 'Soft' }]);
    assert.equal(callError(await exchange(ws, reset), 'r')[0], 'NotSupported', 'a central-system action');
  });

  it('schema violations map to the 1.6 codes (the table in docs/ocpp.md)', async () => {
    const status = { connectorId: 1, errorCode: 'NoError', status: 'Available' };
    const cases: [string, unknown, string][] = [
      ['StatusNotification', { connectorId: 1, errorCode: 'NoError' }, 'OccurenceConstraintViolation'],
      ['StatusNotification', { ...status, connectorId: '1' }, 'TypeConstraintViolation'],
      ['StatusNotification', { ...status, timestamp: 'yesterday' }, 'TypeConstraintViolation'],
      ['StatusNotification', { ...status, status: 'Broken' }, 'PropertyConstraintViolation'],
      ['Authorize', { idTag: 'T'.repeat(21) }, 'PropertyConstraintViolation'],
      ['StatusNotification', { ...status, colour: 'green' }, 'FormationViolation'],
      ['Heartbeat', [], 'FormationViolation'],
      ['Heartbeat', null, 'FormationViolation'],
    ];
    for (const [index, [action, payload, expected]] of cases.entries()) {
      const id = `schema-${index}`;
      const [code, description] = callError(await exchange(ws, JSON.stringify([2, id, action, payload])), id);
      assert.equal(code, expected, `${action} ${JSON.stringify(payload)}: ${description}`);
    }
    assert.equal(
      await counter(http, 'broker_ocpp_bad_messages_total', 'reason="invalid-payload"'),
      cases.length,
    );
  });

  it('a second CALL with the id of one in progress -> ProtocolError, the first still answered', async () => {
    const answers = nextFrames(ws, 2);
    ws.send(HEARTBEAT('twice'));
    ws.send(HEARTBEAT('twice'));
    const [refusal, result] = await answers;
    assert.equal(callError(refusal as unknown[], 'twice')[0], 'ProtocolError');
    assert.deepEqual(result?.slice(0, 2), [3, 'twice']);
  });

  it('more CALLs in flight than the queue holds -> GenericError for the excess, the rest answered in order', async () => {
    const all = nextFrames(ws, 10);
    for (let i = 0; i < 10; i++) ws.send(HEARTBEAT(`burst-${i}`));
    const frames = await all;
    const busy = frames.filter((f) => f[0] === 4).map((f) => callError(f, f[1] as string)[0]);
    const answered = frames.filter((f) => f[0] === 3).map((f) => f[1]);
    assert.ok(busy.length > 0 && busy.every((code) => code === 'GenericError'), JSON.stringify(frames));
    assert.deepEqual(
      answered,
      [...answered].sort((a, b) => Number(String(a).slice(6)) - Number(String(b).slice(6))),
    );
    assert.equal(answered[0], 'burst-0');
  });

  it('a CALLRESULT or CALLERROR for an unknown id gets no answer and is counted', async () => {
    await unanswered(ws, '[3, "never-sent", {}]', 'after-result');
    await unanswered(ws, '[4, "never-sent", "GenericError", "", {}]', 'after-error');
    assert.equal(await counter(http, 'broker_ocpp_bad_messages_total', 'reason="unknown-response-id"'), 2);
  });

  it('a message over 256 KiB closes the connection 1009', async () => {
    const big = await rawChargePoint(broker.url, 'CP-big');
    const done = closed(big);
    big.send(JSON.stringify([2, 'big', 'DataTransfer', { vendorId: 'x', data: 'z'.repeat(300 * 1024) }]));
    assert.equal((await done).code, 1009);
  });

  it('binary frames close the connection 1003 (OCPP-J is text only); other charge points are untouched', async () => {
    const victim = await rawChargePoint(broker.url, 'CP-binary');
    const done = closed(victim);
    victim.send(Buffer.from([2, 0, 1]));
    assert.equal((await done).code, 1003);
    assert.equal((await exchange(bystander, HEARTBEAT('still-here')))[0], 3);
    assert.deepEqual(
      bystanderFrames.map((f) => (JSON.parse(f) as unknown[])[1]),
      ['still-here'],
      'the bystander saw only its own answer',
    );
  });
});

describe('ocpp1.6: a failure of ours answers InternalError and keeps the connection', () => {
  it('the store going away mid-connection -> InternalError, the connection stays open', async () => {
    const broker = await startTestBroker({ endpoints: [OCPP_ENDPOINT] }, [Ocpp16Module]);
    try {
      const ws = await rawChargePoint(broker.url, 'CP-internal');
      await rawBoot(ws);
      await broker.app.get(BrokerStore).close();
      const [code, description] = callError(await exchange(ws, STATUS('after-db')), 'after-db');
      assert.equal(code, 'InternalError');
      assert.doesNotMatch(description, /destroy|pool|sqlite/i, 'no internals leak');
      assert.equal(callError(await exchange(ws, STATUS('again')), 'again')[0], 'InternalError');
      ws.close();
    } finally {
      await broker.close().catch(() => undefined);
    }
  });
});
