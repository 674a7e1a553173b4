import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import mqttPacket, { type Packet } from 'mqtt-packet';
import { encodePacket, PacketReader, packetSize } from './packet-reader.js';
import { type MqttProtocolError } from './reason-codes.js';

function reader(max = 1024): { reader: PacketReader; packets: Packet[]; errors: MqttProtocolError[] } {
  const packets: Packet[] = [];
  const errors: MqttProtocolError[] = [];
  return {
    reader: new PacketReader(max, {
      onPacket: (p) => packets.push(p),
      onMalformed: (e) => errors.push(e),
    }),
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

  it('keeps readers apart: whole packets and partial ones of several connections, interleaved', () => {
    const a = reader();
    const b = reader();
    const publish = (topic: string): Buffer =>
      encodePacket(
        { cmd: 'publish', topic, payload: Buffer.from(topic), qos: 0, retain: false, dup: false },
        4,
      );
    const half = publish('a/split');
    a.reader.push(Buffer.concat([connect, half.subarray(0, 5)]));
    b.reader.push(Buffer.concat([connect, publish('b/1')]));
    a.reader.push(half.subarray(5));
    b.reader.push(publish('b/2'));
    a.reader.push(publish('a/whole'));
    const topics = (packets: Packet[]): string[] =>
      packets.flatMap((p) => (p.cmd === 'publish' ? [p.topic] : []));
    assert.deepEqual(topics(a.packets), ['a/split', 'a/whole']);
    assert.deepEqual(topics(b.packets), ['b/1', 'b/2']);
    assert.deepEqual([...a.errors, ...b.errors], []);
  });

  it('a handler that throws half-way through a chunk leaves nothing behind for the next reader', () => {
    const thrower = new PacketReader(1024, {
      onPacket: (p) => {
        if (p.cmd === 'pingreq') throw new Error('handler bug');
      },
      onMalformed: () => undefined,
    });
    assert.throws(() => thrower.push(Buffer.concat([connect, ping, connect, connect])), /handler bug/);
    const { reader: r, packets, errors } = reader();
    r.push(ping);
    assert.deepEqual(
      packets.map((p) => p.cmd),
      ['pingreq'],
    );
    assert.deepEqual(errors, []);
  });

  it('reads by each connection’s own protocol version', () => {
    const v5 = reader();
    const v4 = reader();
    const connect5 = mqttPacket.generate({
      cmd: 'connect',
      clientId: 'five',
      protocolVersion: 5,
      keepalive: 0,
      clean: true,
    });
    v5.reader.push(connect5);
    v4.reader.push(connect);
    // The same bytes mean different things: v5 reads a property block where v3.1.1 reads payload.
    const publish5 = encodePacket(
      {
        cmd: 'publish',
        topic: 't',
        payload: Buffer.from('x'),
        qos: 0,
        retain: false,
        dup: false,
        properties: { contentType: 'text/plain' },
      },
      5,
    );
    v5.reader.push(publish5);
    v4.reader.push(publish5);
    const last = (packets: Packet[]): Packet | undefined => packets.at(-1);
    const five = last(v5.packets);
    const four = last(v4.packets);
    assert.ok(five?.cmd === 'publish' && four?.cmd === 'publish');
    assert.equal(five.properties?.contentType, 'text/plain');
    assert.equal(five.payload.toString(), 'x');
    assert.equal(four.properties, undefined);
    assert.ok(four.payload.length > 1, 'v3.1.1 reads the property block as payload');
    assert.deepEqual([...v5.errors, ...v4.errors], []);
  });

  it('does not keep the CONNECT packet (its password) once it is handled', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    let seen: WeakRef<Packet> | undefined;
    const r = new PacketReader(1024, {
      onPacket: (p) => {
        if (p.cmd === 'connect') seen = new WeakRef(p);
      },
      onMalformed: () => undefined,
    });
    r.push(
      mqttPacket.generate({
        cmd: 'connect',
        clientId: 'secretive',
        protocolVersion: 4,
        keepalive: 0,
        clean: true,
        username: 'u',
        password: Buffer.from('hunter2'),
      }),
    );
    for (let i = 0; i < 10 && seen?.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    assert.ok(seen !== undefined, 'the CONNECT was read');
    assert.equal(seen.deref(), undefined, 'the reader still holds the CONNECT packet');
    r.push(ping);
  });

  it('a bare PUBACK read by the fast path is the packet mqtt-packet reads, in 3.1.1 and 5.0', () => {
    /** What mqtt-packet alone makes of `bytes`, for a parser of `version`. */
    const byLibrary = (bytes: Buffer, version: number): Packet[] => {
      const found: Packet[] = [];
      const parser = mqttPacket.parser({ protocolVersion: version });
      parser.on('packet', (p: Packet) => found.push(p));
      parser.parse(bytes);
      return found;
    };
    const connect5 = mqttPacket.generate({
      cmd: 'connect',
      clientId: 'c',
      protocolVersion: 5,
      keepalive: 0,
      clean: true,
    });
    for (const [version, hello] of [
      [4, connect],
      [5, connect5],
    ] as const) {
      const r = reader();
      r.reader.push(hello);
      for (const id of [1, 0x1234, 0xffff, 0]) {
        const bytes = Buffer.from([0x40, 2, id >> 8, id & 0xff]);
        r.reader.push(bytes);
        assert.deepEqual(
          { ...r.packets.at(-1) },
          { ...byLibrary(bytes, version)[0] },
          `v${version} id ${id}`,
        );
      }
      // Not bare: a reason code, flags, two in one chunk. These go to mqtt-packet, and read the same.
      const withCode = Buffer.from([0x40, 3, 0, 7, 0x10]);
      const flagged = Buffer.from([0x42, 2, 0, 8]);
      const two = Buffer.from([0x40, 2, 0, 9, 0x40, 2, 0, 10]);
      const before = r.packets.length;
      for (const bytes of [withCode, two]) r.reader.push(bytes);
      assert.deepEqual(
        r.packets.slice(before).map((p) => ({ ...p })),
        [...byLibrary(withCode, version), ...byLibrary(two, version)].map((p) => ({ ...p })),
      );
      r.reader.push(flagged);
      assert.equal(r.errors.length, 1, `v${version}: reserved flags set are malformed, as mqtt-packet says`);
    }
  });

  it('encodes a PUBACK to the bytes mqtt-packet writes, whatever its reason code and properties', () => {
    const pubacks = [1, 0x1234, 0xffff].flatMap((messageId) => [
      { cmd: 'puback' as const, messageId },
      { cmd: 'puback' as const, messageId, reasonCode: 0 },
      { cmd: 'puback' as const, messageId, reasonCode: 0, properties: undefined },
      { cmd: 'puback' as const, messageId, reasonCode: 0x10 },
      { cmd: 'puback' as const, messageId, reasonCode: 0, properties: {} },
      { cmd: 'puback' as const, messageId, reasonCode: 0x87, properties: { reasonString: 'no' } },
    ]);
    for (const version of [3, 4, 5]) {
      for (const packet of pubacks) {
        assert.deepEqual(
          encodePacket(packet, version),
          mqttPacket.generate(packet, { protocolVersion: version }),
          `v${version} ${JSON.stringify(packet)}`,
        );
      }
    }
  });

  it('fails with 0x81 on ill-formed UTF-8 in a string (MQTT 1.5.3, 1.5.4), on every path; well-formed text passes', () => {
    /** A PUBLISH whose topic is `topic` as raw bytes: QoS 1 (id 7) or 0, in 3.1.1 or 5.0 (no properties). */
    const publish = (topic: readonly number[], version: 4 | 5, qos: 0 | 1 = 0): Buffer => {
      const body = [0, topic.length, ...topic, ...(qos ? [0, 7] : []), ...(version === 5 ? [0] : []), 0x78];
      return Buffer.from([0x30 | (qos << 1), body.length, ...body]);
    };
    const illFormed = [
      [0x61, 0xff, 0x62], // a byte that never occurs in UTF-8
      [0xc3], // a lead byte without its continuation
      [0xed, 0xa0, 0x80], // an encoded surrogate (U+D800)
      [0xc0, 0xaf], // an over-long '/'
    ];
    const v5connect = mqttPacket.generate({
      cmd: 'connect',
      clientId: 'c',
      protocolVersion: 5,
      keepalive: 0,
      clean: true,
    });
    for (const topic of illFormed) {
      for (const [version, prefix] of [
        [4, connect],
        [5, v5connect],
      ] as const) {
        for (const qos of [0, 1] as const) {
          const bytes = publish(topic, version, qos);
          const whole = reader();
          whole.reader.push(prefix);
          whole.reader.push(bytes);
          assert.deepEqual(
            whole.errors.map((e) => e.reasonCode),
            [0x81],
            `whole ${version} ${qos} ${topic}`,
          );
          assert.equal(whole.packets.length, 1, 'only the CONNECT was read');
          const split = reader();
          split.reader.push(prefix);
          for (const byte of bytes) split.reader.push(Buffer.from([byte]));
          assert.deepEqual(
            split.errors.map((e) => e.reasonCode),
            [0x81],
            `split ${version} ${qos} ${topic}`,
          );
        }
      }
    }
    const badClientId = Buffer.from(connect);
    badClientId[badClientId.length - 1] = 0xff;
    const c = reader();
    c.reader.push(badClientId);
    assert.deepEqual(
      c.errors.map((e) => e.reasonCode),
      [0x81],
      'a CONNECT with an ill-formed client id',
    );

    const text = 'é/€/😀/\ufffd';
    const ok = reader();
    ok.reader.push(connect);
    ok.reader.push(publish([...Buffer.from(text)], 4));
    assert.deepEqual(ok.errors, []);
    assert.equal((ok.packets[1] as { topic?: string }).topic, text);
  });

  it('packetSize counts the fixed header', () => {
    assert.equal(packetSize(0), 2);
    assert.equal(packetSize(127), 129);
    assert.equal(packetSize(128), 131);
    assert.equal(packetSize(16_384), 16_388);
  });
});
