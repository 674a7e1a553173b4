import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { encodePacket, PacketReader, packetSize } from './packet-reader.js';
import { type MqttProtocolError } from './reason-codes.js';

function reader(max = 1024): { reader: PacketReader; packets: Packet[]; errors: MqttProtocolError[] } {
  const packets: Packet[] = [];
  const errors: MqttProtocolError[] = [];
  return {
    reader: new PacketReader(
      max,
      (p) => packets.push(p),
      (e) => errors.push(e),
    ),
    packets,
    errors,
  };
}

const ping = mqttPacket.generate({ cmd: 'pingreq' });
const connect = mqttPacket.generate({
  cmd: 'connect',
  clientId: 'c',
  protocolVersion: 4,
  keepalive: 0,
  clean: true,
});

describe('PacketReader', () => {
  it('reads several packets from one chunk and one packet from several chunks', () => {
    const { reader: r, packets } = reader();
    r.push(Buffer.concat([connect, ping, ping]));
    assert.deepEqual(
      packets.map((p) => p.cmd),
      ['connect', 'pingreq', 'pingreq'],
    );
    const publish = encodePacket(
      { cmd: 'publish', topic: 't', payload: Buffer.from('hello'), qos: 0, retain: false, dup: false },
      4,
    );
    for (const byte of publish) r.push(Buffer.from([byte]));
    assert.equal(packets.at(-1)?.cmd, 'publish');
  });

  it('fails with 0x95 as soon as a header announces more than the maximum', () => {
    const { reader: r, packets, errors } = reader(100);
    r.push(Buffer.from([0x30, 0xa0, 0x8d, 0x06]));
    assert.equal(errors[0]?.reasonCode, 0x95);
    r.push(ping);
    assert.equal(packets.length, 0, 'nothing is read after a failure');
  });

  it('fails with 0x81 on malformed input, once', () => {
    const { reader: r, errors } = reader();
    r.push(Buffer.from([0x36, 0x02, 0x00, 0x00]));
    r.push(Buffer.from([0x36, 0x02, 0x00, 0x00]));
    assert.deepEqual(
      errors.map((e) => e.reasonCode),
      [0x81],
    );
  });

  it('packetSize counts the fixed header', () => {
    assert.equal(packetSize(0), 2);
    assert.equal(packetSize(127), 129);
    assert.equal(packetSize(128), 131);
    assert.equal(packetSize(16_384), 16_388);
  });
});
