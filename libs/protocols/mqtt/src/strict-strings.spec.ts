import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { strictParser } from './strict-strings.js';

/** What a strict parser makes of `bytes`: the packets it read and the errors it raised. */
function parse(bytes: Buffer, protocolVersion: number): { packets: Packet[]; errors: string[] } {
  const parser = strictParser({ protocolVersion });
  const packets: Packet[] = [];
  const errors: string[] = [];
  parser.on('packet', (packet: Packet) => packets.push(packet));
  parser.on('error', (err: Error) => errors.push(err.message));
  parser.parse(bytes);
  return { packets, errors };
}

/** `packet`'s bytes with the first `marker` byte (an ASCII letter placed for it) replaced by 0xff. */
function spoiled(packet: Packet, protocolVersion: number, marker: string): Buffer {
  const bytes = mqttPacket.generate(packet, { protocolVersion });
  bytes[bytes.indexOf(marker.charCodeAt(0))] = 0xff;
  return bytes;
}

describe('strictParser', () => {
  it('refuses ill-formed UTF-8 in a subscription filter and in a v5 user property', () => {
    const subscribe: Packet = { cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'a/Z', qos: 0 }] };
    assert.equal(parse(spoiled(subscribe, 4, 'Z'), 4).errors[0], 'ill-formed UTF-8 in a string');
    const publish: Packet = {
      cmd: 'publish',
      topic: 't',
      payload: Buffer.from('x'),
      qos: 0,
      retain: false,
      dup: false,
      properties: { userProperties: { k: 'Q' } },
    };
    const result = parse(spoiled(publish, 5, 'Q'), 5);
    assert.equal(result.errors[0], 'ill-formed UTF-8 in a string');
    assert.equal(result.packets.length, 0);
  });

  it('refuses overlong forms and surrogates, and reads a U+FFFD sent as such', () => {
    const subscribe = (topic: Buffer): Buffer => {
      const bytes = mqttPacket.generate(
        { cmd: 'subscribe', messageId: 1, subscriptions: [{ topic: 'x'.repeat(topic.length), qos: 0 }] },
        { protocolVersion: 4 },
      );
      topic.copy(bytes, bytes.indexOf('x'.charCodeAt(0)));
      return bytes;
    };
    for (const bad of [
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0x61, 0x80],
    ]) {
      const result = parse(subscribe(Buffer.from(bad)), 4);
      assert.equal(result.errors[0], 'ill-formed UTF-8 in a string', Buffer.from(bad).toString('hex'));
      assert.equal(result.packets.length, 0);
    }
    const replacement = parse(subscribe(Buffer.from('a/\uFFFD', 'utf8')), 4);
    assert.deepEqual(replacement.errors, []);
    assert.equal((replacement.packets[0] as mqttPacket.ISubscribePacket).subscriptions[0]?.topic, 'a/\uFFFD');
  });

  it('reads well-formed strings as mqtt-packet does, payloads untouched', () => {
    const publish: Packet = {
      cmd: 'publish',
      topic: 'ü/€/😀',
      payload: Buffer.from([0xff, 0xfe]),
      qos: 1,
      messageId: 3,
      retain: false,
      dup: false,
      properties: { userProperties: { clé: 'välue' }, contentType: 'text/plain' },
    };
    const bytes = mqttPacket.generate(publish, { protocolVersion: 5 });
    const strict = parse(bytes, 5);
    const plain: Packet[] = [];
    const reference = mqttPacket.parser({ protocolVersion: 5 });
    reference.on('packet', (packet: Packet) => plain.push(packet));
    reference.parse(bytes);
    assert.deepEqual(strict.errors, []);
    assert.deepEqual(strict.packets, plain);
  });
});
