import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeCall, encodeError, encodeResult, parseFrame, type ParsedFrame } from './rpc-frame.js';

/** The frame's kind, or 'invalid' for a refused message. */
const kindOf = (parsed: ParsedFrame): string => (parsed.ok ? parsed.message.kind : 'invalid');

describe('parseFrame', () => {
  it('reads the three message types', () => {
    assert.deepEqual(parseFrame('[2,"a","Heartbeat",{}]'), {
      ok: true,
      message: { kind: 'call', id: 'a', action: 'Heartbeat', payload: {} },
    });
    assert.deepEqual(parseFrame('[3,"a",{"x":1}]'), {
      ok: true,
      message: { kind: 'result', id: 'a', payload: { x: 1 } },
    });
    assert.deepEqual(parseFrame('[4,"a","GenericError","bad",{}]'), {
      ok: true,
      message: { kind: 'error', id: 'a', code: 'GenericError', description: 'bad', details: {} },
    });
  });

  it('keeps a CALL payload of any JSON type for the schema to judge', () => {
    assert.deepEqual(parseFrame('[2,"a","Heartbeat",null]'), {
      ok: true,
      message: { kind: 'call', id: 'a', action: 'Heartbeat', payload: null },
    });
  });

  it('ignores unknown message type numbers', () => {
    assert.deepEqual(parseFrame('[5,"a"]'), { ok: true, message: { kind: 'unknown-type', type: 5 } });
    assert.deepEqual(parseFrame('[2.5]'), { ok: true, message: { kind: 'unknown-type', type: 2.5 } });
  });

  it('invalid JSON: FormationViolation, with the id when the text starts like a CALL', () => {
    const broken = parseFrame('[2, "abc-1", "Heartbeat", {');
    assert.deepEqual(broken, {
      ok: false,
      id: 'abc-1',
      code: 'FormationViolation',
      reason: 'invalid-json',
      problem: 'The message is not valid JSON.',
    });
    assert.equal((parseFrame('[3, "abc", {') as { id: unknown }).id, null, 'only CALLs are answered');
    assert.equal((parseFrame(`[2, "${'x'.repeat(37)}", {`) as { id: unknown }).id, null);
    assert.equal((parseFrame('') as { reason: string }).reason, 'invalid-json');
  });

  it('JSON that is not a frame is ProtocolError with no id', () => {
    for (const text of [
      '{}',
      '[]',
      '"x"',
      '["2","a","Heartbeat",{}]',
      '[2, 5, "Heartbeat", {}]',
      '[2, "", "Heartbeat", {}]',
    ]) {
      const frame = parseFrame(text);
      assert.equal(kindOf(frame), 'invalid', text);
      assert.equal((frame as { code: string }).code, 'ProtocolError', text);
      assert.equal((frame as { id: unknown }).id, null, text);
    }
  });

  it('ids over 36 characters: ProtocolError, answered for a CALL only', () => {
    const long = 'y'.repeat(37);
    const call = parseFrame(`[2,"${long}","Heartbeat",{}]`);
    assert.deepEqual(
      [kindOf(call), (call as { id: unknown }).id, (call as { reason: string }).reason],
      ['invalid', long, 'bad-message-id'],
    );
    assert.equal((parseFrame(`[3,"${long}",{}]`) as { id: unknown }).id, null);
    assert.equal(kindOf(parseFrame(`[2,"${'y'.repeat(36)}","Heartbeat",{}]`)), 'call');
  });

  it('CALLs, CALLRESULTs and CALLERRORs of the wrong shape', () => {
    assert.deepEqual(
      [
        parseFrame('[2,"a","Heartbeat"]'),
        parseFrame('[2,"a","",{}]'),
        parseFrame('[2,"a","Heartbeat",{},1]'),
      ].map((f) => [(f as { code: string }).code, (f as { id: unknown }).id]),
      [
        ['ProtocolError', 'a'],
        ['ProtocolError', 'a'],
        ['ProtocolError', 'a'],
      ],
    );
    assert.equal(kindOf(parseFrame('[3,"a"]')), 'invalid');
    assert.equal(kindOf(parseFrame('[4,"a","GenericError"]')), 'invalid');
    assert.equal(kindOf(parseFrame('[4,"a",1,"x",{}]')), 'invalid');
  });
});

describe('encoders', () => {
  it('write the 1.6 frames', () => {
    assert.equal(encodeCall('1', 'Reset', { type: 'Soft' }), '[2,"1","Reset",{"type":"Soft"}]');
    assert.equal(encodeResult('1', {}), '[3,"1",{}]');
    assert.equal(encodeError('1', 'GenericError', 'no'), '[4,"1","GenericError","no",{}]');
  });

  it('cap a CALLERROR description', () => {
    const frame = JSON.parse(encodeError('1', 'InternalError', 'z'.repeat(1000))) as unknown[];
    assert.equal((frame[3] as string).length, 255);
  });
});
