import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import mqttPacket from 'mqtt-packet';
import { internalsOf, parseString } from './mqtt-packet-internals.js';

describe('mqtt-packet internals (a failure here means an upgrade moved them: see mqtt-packet-internals.ts)', () => {
  it('a parser between packets holds nothing; half a packet is held; strings go through _parseString', () => {
    assert.equal(typeof parseString, 'function');
    const parser = mqttPacket.parser({ protocolVersion: 4 });
    const state = internalsOf(parser);
    assert.deepEqual(state.settings, { protocolVersion: 4 });
    assert.equal(state._list.length, 0);
    assert.equal(state._stateCounter, 0);
    assert.equal(state.packet.length, -1);
    assert.equal(typeof state._emitError, 'function');

    const strings: string[] = [];
    state._parseString = function (this: typeof state) {
      const text = parseString.call(this);
      if (text !== null) strings.push(text);
      assert.equal(typeof this._pos, 'number');
      return text;
    };
    const connect = mqttPacket.generate({ cmd: 'connect', clientId: 'spec-client', protocolVersion: 4 });
    parser.parse(connect.subarray(0, 5));
    assert.ok(state._list.length > 0 || state._stateCounter !== 0, 'half a packet is held');
    const packets: unknown[] = [];
    parser.on('packet', (packet) => packets.push(packet));
    parser.parse(connect.subarray(5));
    assert.equal(packets.length, 1);
    assert.ok(strings.includes('spec-client'), 'the client id was read by _parseString');
    assert.equal(state._list.length, 0);
    assert.equal(state.packet.length, -1);
  });
});
