import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { maskedFrame, OPCODE, readServerFrame } from './ws-frames.js';

describe('scale ws frames', () => {
  it('masks a client frame with the given key', () => {
    const frame = maskedFrame(OPCODE.BINARY, Buffer.from([1, 2, 3, 4, 5]), Buffer.from([0xff, 0, 0xff, 0]));
    assert.deepEqual([...frame], [0x82, 0x85, 0xff, 0, 0xff, 0, 0xfe, 2, 0xfc, 4, 0xfa]);
  });

  it('uses the 16-bit length from 126 bytes on', () => {
    const frame = maskedFrame(OPCODE.BINARY, Buffer.alloc(300));
    assert.deepEqual([...frame.subarray(0, 4)], [0x82, 0x80 | 126, 1, 44]);
    assert.equal(frame.length, 4 + 4 + 300);
  });

  it('reads a server frame once all of it is there', () => {
    const connack = Buffer.from([0x82, 4, 0x20, 2, 0, 0, 0x99]);
    assert.equal(readServerFrame(connack.subarray(0, 4)), null);
    const frame = readServerFrame(connack);
    assert.equal(frame?.opcode, OPCODE.BINARY);
    assert.deepEqual([...(frame?.payload ?? [])], [0x20, 2, 0, 0]);
    assert.equal(frame?.bytes, 6);
    assert.throws(() => readServerFrame(Buffer.from([0x82, 0x81, 0, 0, 0, 0, 1])), /masked/);
  });
});
