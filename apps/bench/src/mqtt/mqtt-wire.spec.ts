import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mqttPacket from 'mqtt-packet';
import { PacketSplitter, packetIdFor, PAYLOAD_BYTES, PublishTemplate, readPublish } from './mqtt-wire.js';

describe('PublishTemplate', () => {
  it('patches packet id and payload into what mqtt-packet itself would encode', () => {
    const built = new PublishTemplate('bench/1/q1', 1, 7).build(123456, 42.5, 1001);
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    payload.writeUInt16BE(7, 0);
    payload.writeUInt32BE(123456, 2);
    payload.writeDoubleBE(42.5, 6);
    const expected = mqttPacket.generate({
      cmd: 'publish',
      topic: 'bench/1/q1',
      payload,
      qos: 1,
      messageId: 1001,
      retain: false,
      dup: false,
    });
    assert.deepEqual(built, expected);
  });

  it('builds a fresh buffer each time', () => {
    const template = new PublishTemplate('t', 0, 0);
    assert.notEqual(template.build(1, 0, 0), template.build(1, 0, 0));
  });
});

describe('readPublish', () => {
  it('reads back what was built, for QoS 0 and 1', () => {
    assert.deepEqual(readPublish(new PublishTemplate('a/b', 0, 3).build(9, 1.25, 0)), {
      qos: 0,
      packetId: 0,
      publisher: 3,
      seq: 9,
      sentAt: 1.25,
      payloadBytes: PAYLOAD_BYTES,
    });
    assert.equal(readPublish(new PublishTemplate('a/b', 1, 3).build(9, 1.25, 10))?.packetId, 10);
  });

  it('refuses a payload too short to hold the bench fields', () => {
    const short = mqttPacket.generate({
      cmd: 'publish',
      topic: 'a',
      payload: Buffer.alloc(4),
      qos: 0,
      retain: false,
      dup: false,
    });
    assert.equal(readPublish(short), null);
  });
});

describe('PacketSplitter', () => {
  const packets = [
    new PublishTemplate('x', 0, 0).build(1, 0, 0),
    Buffer.from([0x40, 2, 0, 5]),
    new PublishTemplate('y'.repeat(200), 1, 1).build(2, 0, 3),
  ];
  const whole = Buffer.concat(packets);

  it('splits a frame holding several packets', () => {
    const seen: Buffer[] = [];
    new PacketSplitter().push(whole, (p) => seen.push(Buffer.from(p)));
    assert.deepEqual(seen, packets);
  });

  it('joins packets spread over frames, cut anywhere (in the remaining length too)', () => {
    for (let size = 1; size <= 7; size++) {
      const seen: Buffer[] = [];
      const splitter = new PacketSplitter();
      for (let i = 0; i < whole.length; i += size) {
        splitter.push(whole.subarray(i, i + size), (p) => seen.push(Buffer.from(p)));
      }
      assert.deepEqual(seen, packets, `chunks of ${size}`);
    }
  });
});

describe('packetIdFor', () => {
  it('stays within 1..65535', () => {
    assert.equal(packetIdFor(0), 1);
    assert.equal(packetIdFor(65534), 65535);
    assert.equal(packetIdFor(65535), 1);
  });
});
